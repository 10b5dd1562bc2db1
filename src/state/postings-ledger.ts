import type { SqlConnection } from '../load/warehouse/sql-connection.js';
import type { Day } from '../plan/days.js';

/**
 * What a postings window's ledger records as its rows (`_etl_windows.rows_loaded`), which `verify` compares with
 * the rows the window holds. A span asks some customers (all of them under `customers: all`, only some under
 * `changed` and `webhook`): the window's rows after its commit are those the span loaded (the customers it asked,
 * each re-listed whole) and those of the customers it did not ask, kept as they were. Counting only the first
 * made every re-read of a window by a cheap selection (the look-back) record fewer rows than the window holds, and
 * `verify` report "extra" postings. A row of a customer the span asked that the service no longer lists is in
 * neither: `verify` still reports it. A row this commit wrote is the span's, whoever it belongs to.
 */
export async function keptPostingRows(
  conn: SqlConnection,
  stream: string,
  loadedAt: string,
  windows: Day[],
): Promise<Map<Day, number>> {
  if (windows.length === 0) return new Map();
  const s = conn.schemaSql;
  const list = windows.map((_, i) => `CAST($${i + 3} AS DATE)`).join(', ');
  const rows = await conn.all<{ d: string; n: number | string }>(
    `SELECT CAST(p._window_start AS VARCHAR) AS d, COUNT(*) AS n FROM ${s}.loyalty_postings p
      WHERE p._window_start IN (${list})
        AND p._loaded_at <> CAST($2 AS TIMESTAMPTZ)
        AND NOT EXISTS (SELECT 1 FROM ${s}._etl_customer_observations o
                         WHERE o.stream = $1 AND o.customer_id = p.customer_id AND o._loaded_at = CAST($2 AS TIMESTAMPTZ))
      GROUP BY p._window_start`,
    [stream, loadedAt, ...windows],
  );
  return new Map(rows.map((r) => [r.d, Number(r.n)]));
}

/** Rows of `loyalty_postings` per window of `windows`. */
export async function postingRowsOf(conn: SqlConnection, windows: Day[]): Promise<Map<Day, number>> {
  if (windows.length === 0) return new Map();
  const list = windows.map((_, i) => `CAST($${i + 1} AS DATE)`).join(', ');
  const rows = await conn.all<{ d: string; n: number | string }>(
    `SELECT CAST(_window_start AS VARCHAR) AS d, COUNT(*) AS n FROM ${conn.schemaSql}.loyalty_postings WHERE _window_start IN (${list}) GROUP BY _window_start`,
    windows,
  );
  return new Map(rows.map((r) => [r.d, Number(r.n)]));
}

/**
 * Postings a sweep found in windows before its span (a customer asked for the first time in days keeps its
 * postings since): the rows each such window gained are added to what its ledger records, where it is done.
 */
export async function addRowsLoaded(
  conn: SqlConnection,
  job: string,
  stream: string,
  gained: Map<Day, number>,
): Promise<void> {
  for (const [day, n] of gained) {
    if (n === 0) continue;
    await conn.run(
      `UPDATE ${conn.schemaSql}._etl_windows SET rows_loaded = rows_loaded + $1 WHERE job = $2 AND stream = $3 AND window_start = CAST($4 AS DATE) AND status = 'done'`,
      [n, job, stream, day],
    );
  }
}
