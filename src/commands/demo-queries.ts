import type { StreamName } from '../plan/job-plan.js';

/** The analyst query the demo shows — average recommendation score by loyalty tier — and the streams it needs. */
export const DEMO_QUERY: { streams: StreamName[]; sql: string } = {
  streams: ['accounts', 'surveys', 'loyalty_postings', 'loyalty_status', 'vouchers'],
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

/**
 * The finance query the demo shows on the loyalty state: the points liability (wallet points and their value) per
 * currency, and the points that expire in the 30 days from `today` (what is left of the balance details' expiries
 * due by then; summed over a customer's wallets, they have no currency of their own). The demo's source lives on a
 * fixed clock, so its day is written in; on a live warehouse it is `CURRENT_DATE`.
 */
export function financeQuery(today: string): string {
  return `WITH today AS (SELECT CAST('${today}' AS DATE) AS day)   -- on a live warehouse: CURRENT_DATE
SELECT 'liability' AS measure, currency,
       COUNT(DISTINCT customer_id) AS customers, SUM(points) AS points, SUM(value) AS value
  FROM loyalty_wallets
 GROUP BY currency
UNION ALL
SELECT 'expiring in 30 days', NULL,
       COUNT(DISTINCT d.customer_id), SUM(d.points_gained - d.points_redeemed - d.points_expired), NULL
  FROM loyalty_balance_details d, today
 WHERE d.expires_at > CAST(today.day AS TIMESTAMPTZ)
   AND d.expires_at <= CAST(today.day + 30 AS TIMESTAMPTZ)
 ORDER BY measure, currency`;
}
