import type { StreamName } from '../plan/job-plan.js';
import { quoteIdent } from '../load/warehouse/identifiers.js';
import type { SqlConnection } from '../load/warehouse/sql-connection.js';
import type { Day } from '../plan/days.js';

/** The streams of what the service knows about each customer today: snapshots, not records of a window. */
type StateStream = 'loyalty_status' | 'vouchers';

function isStateStream(stream: StreamName): stream is StateStream {
  return stream === 'loyalty_status' || stream === 'vouchers';
}

/** What the warehouse holds of one window of a stream, and what its last load recorded. */
export interface WarehouseWindow {
  /** Records of the window in the warehouse now, counted at the source's level (see {@link warehouseWindows}). */
  held: number;
  /** Records of the window kept in `_etl_rejects`. */
  rejected: number;
  /** `_etl_windows` status (`done`, `failed`, `pending`), or null when the window was never planned. */
  status: string | null;
  /** Rows the last load of the window put in the stream's main table. */
  rowsLoaded: number | null;
}

/**
 * SQL counting the records of each `_window_start` that the warehouse still holds, at the level the source
 * counts them:
 * - accounts: the customers the window's export served (`_etl_account_windows`, kept although `accounts` holds
 *   only each customer's latest version) that are still in `accounts`;
 * - surveys: answer records (`survey_responses`; the source's `totalCount` counts elements of 1–4 answers,
 *   so the source side counts answers too);
 * - loyalty_postings: rows of `loyalty_postings`;
 * - the state streams: none — a customer's rows move to the window of their latest observation (see `checkWindow`).
 */
function heldSql(conn: SqlConnection, stream: Exclude<StreamName, StateStream>): string {
  const s = conn.schemaSql;
  switch (stream) {
    case 'accounts':
      return `SELECT CAST(w._window_start AS VARCHAR) AS d, COUNT(*) AS n FROM ${s}._etl_account_windows w
               WHERE w._window_start >= CAST($1 AS DATE) AND w._window_start <= CAST($2 AS DATE)
                 AND EXISTS (SELECT 1 FROM ${s}.accounts a WHERE a.customer_id = w.customer_id)
               GROUP BY w._window_start`;
    case 'surveys':
      return `SELECT CAST(_window_start AS VARCHAR) AS d, COUNT(*) AS n FROM ${s}.survey_responses
               WHERE _window_start >= CAST($1 AS DATE) AND _window_start <= CAST($2 AS DATE) GROUP BY _window_start`;
    case 'loyalty_postings':
      return `SELECT CAST(_window_start AS VARCHAR) AS d, COUNT(*) AS n FROM ${s}.loyalty_postings
               WHERE _window_start >= CAST($1 AS DATE) AND _window_start <= CAST($2 AS DATE) GROUP BY _window_start`;
  }
}

/** Per window start in `[from, to]`: what the warehouse holds of `stream` now. Windows with nothing are absent. */
export async function warehouseWindows(
  conn: SqlConnection,
  job: string,
  stream: StreamName,
  from: Day,
  to: Day,
): Promise<Map<Day, WarehouseWindow>> {
  const out = new Map<Day, WarehouseWindow>();
  const entry = (d: Day) => {
    let w = out.get(d);
    if (!w) out.set(d, (w = { held: 0, rejected: 0, status: null, rowsLoaded: null }));
    return w;
  };
  if (!isStateStream(stream))
    for (const r of await conn.all<{ d: string; n: number | string }>(heldSql(conn, stream), [from, to]))
      entry(r.d).held = Number(r.n);
  const rejects = await conn.all<{ d: string; n: number | string }>(
    `SELECT CAST(window_start AS VARCHAR) AS d, COUNT(*) AS n FROM ${conn.schemaSql}._etl_rejects
      WHERE job = $1 AND stream = $2 AND window_start >= CAST($3 AS DATE) AND window_start <= CAST($4 AS DATE) GROUP BY window_start`,
    [job, stream, from, to],
  );
  for (const r of rejects) entry(r.d).rejected = Number(r.n);
  const ledger = await conn.all<{ d: string; status: string; rows_loaded: number | string }>(
    `SELECT CAST(window_start AS VARCHAR) AS d, status, rows_loaded FROM ${conn.schemaSql}._etl_windows
      WHERE job = $1 AND stream = $2 AND window_start >= CAST($3 AS DATE) AND window_start <= CAST($4 AS DATE)`,
    [job, stream, from, to],
  );
  for (const r of ledger) {
    const w = entry(r.d);
    w.status = r.status;
    w.rowsLoaded = r.status === 'done' ? Number(r.rows_loaded) : null;
  }
  return out;
}

/**
 * {@link warehouseWindows} of each of `streams`, read one after the other: a connection runs one query at a time
 * (pg refuses a second query while one is under way on its client).
 */
export async function warehouseWindowsOf(
  conn: SqlConnection,
  job: string,
  streams: readonly StreamName[],
  from: Day,
  to: Day,
): Promise<Map<StreamName, Map<Day, WarehouseWindow>>> {
  const out = new Map<StreamName, Map<Day, WarehouseWindow>>();
  for (const stream of streams) out.set(stream, await warehouseWindows(conn, job, stream, from, to));
  return out;
}

/** One window of one stream as `verify` reports it. */
export interface WindowCheck {
  stream: StreamName;
  window: Day;
  /** What the warehouse should hold: the source's count, or (postings) what the window's load recorded. */
  expected: number | null;
  /** Where `expected` comes from. */
  basis: 'source' | 'load';
  /** What the warehouse holds, rejects included. */
  held: number;
  rejected: number;
  /** Null when the window is complete; otherwise what is wrong. */
  gap: string | null;
}

/**
 * Compares one window. Accounts and surveys are compared with the source's count: every record it serves must
 * be in the warehouse or in the rejects. Postings have no per-window count in the source, so they are compared
 * with what the window's last load recorded (catching rows lost or removed since), and a window never loaded is
 * a gap; whether the source has postings the load never saw is beyond what counts can prove. The state streams
 * hold a snapshot, which later observations replace: a window proves only that it was loaded (its coverage of
 * the customers is checked apart, see `stateCoverage`).
 */
export function checkWindow(
  stream: StreamName,
  window: Day,
  warehouse: WarehouseWindow | undefined,
  sourceCount: number | null,
): WindowCheck {
  const w = warehouse ?? { held: 0, rejected: 0, status: null, rowsLoaded: null };
  if (isStateStream(stream)) {
    const gap = w.rowsLoaded === null ? 'never loaded' : null;
    return {
      stream,
      window,
      expected: w.rowsLoaded,
      basis: 'load',
      held: w.rowsLoaded ?? 0,
      rejected: w.rejected,
      gap,
    };
  }
  if (stream === 'loyalty_postings') {
    if (w.rowsLoaded === null)
      return { stream, window, expected: null, basis: 'load', held: w.held, rejected: w.rejected, gap: 'never loaded' };
    return {
      stream,
      window,
      expected: w.rowsLoaded,
      basis: 'load',
      held: w.held,
      rejected: w.rejected,
      gap: difference(w.rowsLoaded, w.held),
    };
  }
  const held = w.held + w.rejected;
  return {
    stream,
    window,
    expected: sourceCount,
    basis: 'source',
    held,
    rejected: w.rejected,
    gap: sourceCount === null ? 'source count unknown' : difference(sourceCount, held),
  };
}

function difference(expected: number, held: number): string | null {
  if (held === expected) return null;
  return held < expected ? `${expected - held} missing` : `${held - expected} more than expected`;
}

/** A table whose key more than one row holds. */
export interface DuplicateKeys {
  table: string;
  /** Keys held by more than one row. */
  keys: number;
}

/**
 * The tables of `tables` where some key is held by more than one row, for a warehouse that does not declare its
 * keys (the merge keeps them): a whole-table check, since a duplicate may span windows.
 */
export async function duplicateKeys(
  conn: SqlConnection,
  tables: ReadonlyArray<{ name: string; key: readonly string[] }>,
): Promise<DuplicateKeys[]> {
  const out: DuplicateKeys[] = [];
  for (const t of tables) {
    if (t.key.length === 0) continue;
    const [row] = await conn.all<{ n: number | string }>(
      `SELECT COUNT(*) AS n FROM (SELECT 1 AS one FROM ${conn.schemaSql}.${quoteIdent(t.name)} GROUP BY ${t.key.map(quoteIdent).join(', ')} HAVING COUNT(*) > 1) d`,
    );
    const keys = Number(row!.n);
    if (keys > 0) out.push({ table: t.name, keys });
  }
  return out;
}
