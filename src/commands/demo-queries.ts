import type { StreamName } from '../config/config-schema.js';
import type { SqlConnection } from '../load/sql-connection.js';

/** The analyst query the demo shows, and the streams it needs. */
export const DEMO_QUERY: { streams: StreamName[]; sql: string } = {
  streams: ['accounts'],
  sql: `SELECT country, COUNT(*) AS customers, COUNT(email) AS with_email,
       MIN(member_since)::DATE AS first_member_since
  FROM accounts
 GROUP BY country
 ORDER BY customers DESC
 LIMIT 5`,
};

const TABLES = ['accounts', 'account_custom_fields', '_etl_windows', '_etl_rejects'];

/** Row counts of the warehouse tables the demo loaded. */
export async function demoTableCounts(conn: SqlConnection): Promise<Array<{ table: string; rows: number }>> {
  const out: Array<{ table: string; rows: number }> = [];
  for (const table of TABLES) {
    const [row] = await conn.all<{ n: string | number }>(`SELECT COUNT(*) AS n FROM ${conn.schemaSql}.${table}`);
    out.push({ table, rows: Number(row?.n ?? 0) });
  }
  return out;
}
