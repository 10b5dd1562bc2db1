import type { StreamName } from '../config/config-schema.js';

/** The analyst query the demo shows — average recommendation score by loyalty tier — and the streams it needs. */
export const DEMO_QUERY: { streams: StreamName[]; sql: string } = {
  streams: ['accounts', 'surveys', 'loyalty_postings'],
  sql: `WITH current_tier AS (            -- each customer's tier on their latest posting
  SELECT customer_id, tier_name
    FROM (SELECT customer_id, tier_name,
                 ROW_NUMBER() OVER (PARTITION BY customer_id ORDER BY posted_at DESC) AS n
            FROM loyalty_postings) p
   WHERE n = 1)
SELECT t.tier_name AS loyalty_tier,
       COUNT(*) AS nps_answers,
       ROUND(AVG(TRY_CAST(a.answer AS DOUBLE)), 2) AS avg_nps
  FROM survey_answers a
  JOIN survey_responses r USING (response_id)
  JOIN current_tier t USING (customer_id)
 WHERE lower(a.question_code) = 'nps'
 GROUP BY t.tier_name
 ORDER BY avg_nps DESC`,
};
