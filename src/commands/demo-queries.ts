import type { StreamName } from '../plan/job-plan.js';
import type { SqlConnection } from '../load/sql-connection.js';

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

const TABLES = [
  'accounts',
  'account_custom_fields',
  'survey_responses',
  'survey_answers',
  'survey_questions',
  'loyalty_postings',
  'profile_fields',
  '_etl_windows',
  '_etl_rejects',
];

/** Row counts of the warehouse tables the demo loaded. */
export async function demoTableCounts(conn: SqlConnection): Promise<Array<{ table: string; rows: number }>> {
  const out: Array<{ table: string; rows: number }> = [];
  for (const table of TABLES) {
    const [row] = await conn.all<{ n: string | number }>(`SELECT COUNT(*) AS n FROM ${conn.schemaSql}.${table}`);
    out.push({ table, rows: Number(row?.n ?? 0) });
  }
  return out;
}
