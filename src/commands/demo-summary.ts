import type { SqlConnection } from '../load/warehouse/sql-connection.js';
import type { JobRunResult } from '../pipeline/job-run-request.js';
import { count } from './counts.js';
import { readAs } from './stream-units.js';

/** What each demo table holds, in words: a count never stands without what it counts. */
const TABLES: ReadonlyArray<{ table: string; counts: string }> = [
  { table: 'accounts', counts: 'customers' },
  { table: 'account_custom_fields', counts: 'custom field values' },
  { table: 'survey_responses', counts: 'survey responses' },
  { table: 'survey_answers', counts: 'answers' },
  { table: 'survey_questions', counts: 'questions' },
  { table: 'loyalty_postings', counts: 'postings' },
  { table: 'loyalty_status', counts: 'customer loyalty states' },
  { table: 'loyalty_wallets', counts: 'wallets' },
  { table: 'loyalty_balance_details', counts: 'point expiry buckets' },
  { table: 'vouchers', counts: 'vouchers' },
  { table: 'profile_fields', counts: 'profile field definitions' },
  { table: '_etl_windows', counts: 'windows loaded' },
  { table: '_etl_rejects', counts: 'rejected records' },
];

/**
 * The lines that say what this demo run did: per stream the windows and records read (accounts counts versions:
 * a customer changed in three weeks is read three times), or that there was nothing new to load.
 */
export function describeDemoRun(result: JobRunResult, through: string): string[] {
  const requests = `${count(result.requests)} request${result.requests === 1 ? '' : 's'} to the service`;
  if (result.loaded.length === 0 && result.failed.length === 0)
    return [`this run: nothing new to load, every window through ${through} is loaded already (${requests})`];
  const byStream = new Map<string, { windows: number; read: number; rejected: number }>();
  for (const c of result.loaded) {
    const s = byStream.get(c.stream) ?? { windows: 0, read: 0, rejected: 0 };
    s.windows++;
    s.read += c.extracted;
    s.rejected += c.rejected;
    byStream.set(c.stream, s);
  }
  const width = Math.max(...[...byStream.values()].map((s) => count(s.read).length));
  const lines = [`this run read (${requests}):`];
  for (const [stream, s] of byStream) {
    const windows = `${s.windows} weekly window${s.windows === 1 ? '' : 's'}`;
    const rejected = s.rejected > 0 ? `, ${count(s.rejected)} rejected` : '';
    lines.push(`  ${stream.padEnd(18)} ${count(s.read).padStart(width)} ${readAs(stream)} in ${windows}${rejected}`);
  }
  return lines;
}

/** The rows of each table the demo loads, each with what its rows are. */
export async function describeDemoTables(conn: SqlConnection): Promise<string[]> {
  const rows: Array<{ table: string; n: string; counts: string }> = [];
  for (const { table, counts } of TABLES) {
    const [row] = await conn.all<{ n: string | number }>(`SELECT COUNT(*) AS n FROM ${conn.schemaSql}.${table}`);
    rows.push({ table, n: count(Number(row?.n ?? 0)), counts });
  }
  const width = Math.max(...rows.map((r) => r.n.length));
  return rows.map((r) => `  ${r.table.padEnd(22)} ${r.n.padStart(width)} ${r.counts}`);
}
