import type { SqlConnection } from '../load/warehouse/sql-connection.js';
import { addDays, type Day } from '../plan/days.js';
import type { Window } from '../plan/windows.js';

/**
 * The customer directory is the accounts stream's windows from the program's first day on: together they list
 * every customer the source has. These read, from `_etl_windows`, how much of it the warehouse holds.
 */

/** The windows of `windows` (consecutive, of one stream) that are not recorded done. */
export async function windowsNotDone(
  conn: SqlConnection,
  job: string,
  stream: string,
  windows: Window[],
): Promise<Window[]> {
  if (windows.length === 0) return [];
  const rows = await conn.db
    .selectFrom('_etl_windows')
    .select(['window_start', 'window_end'])
    .where('job', '=', job)
    .where('stream', '=', stream)
    .where('status', '=', 'done')
    .where('window_start', '>=', windows[0]!.start)
    .where('window_start', '<=', windows.at(-1)!.start)
    .execute();
  // a window done only up to an earlier, shorter end is not done for the days after it
  const doneThrough = new Map(rows.map((r) => [String(r.window_start), String(r.window_end)]));
  return windows.filter((w) => (doneThrough.get(w.start) ?? '') < w.end);
}

/**
 * The last day through which every accounts window from `gridStart` (the window holding the program's first day)
 * is done, without a gap: the customers created by then are all known. The day before `gridStart` when none is.
 */
export async function directoryCompleteThrough(conn: SqlConnection, job: string, gridStart: Day): Promise<Day> {
  const done = await conn.db
    .selectFrom('_etl_windows')
    .select(['window_start', 'window_end'])
    .where('job', '=', job)
    .where('stream', '=', 'accounts')
    .where('status', '=', 'done')
    .where('window_start', '>=', gridStart)
    .orderBy('window_start')
    .execute();
  let through = addDays(gridStart, -1);
  for (const w of done) {
    if (String(w.window_start) > addDays(through, 1)) break;
    if (String(w.window_end) > through) through = String(w.window_end);
  }
  return through;
}

/** What the warehouse holds of the customer directory over a range of window starts. */
export interface DirectoryHeld {
  /** Customers some accounts window of the range listed (`_etl_account_windows`). */
  seen: number;
  /** Rejected accounts records of the range whose customer no window listed (each counted once). */
  rejected: number;
}

/** The key a rejected accounts record counts under: its `customerId` (or `accountId`) when it is text, else its whole payload. */
function rejectKey(payload: string): string {
  try {
    const record = JSON.parse(payload) as { customerId?: unknown; accountId?: unknown } | null;
    const id = record?.customerId ?? record?.accountId;
    return typeof id === 'string' ? id.trim() : payload;
  } catch {
    return payload;
  }
}

/** The first day of the first accounts window that listed any customer: no customer is known before it. */
export async function firstListedDay(conn: SqlConnection): Promise<Day | undefined> {
  const [row] = await conn.all<{ d: string | null }>(
    `SELECT CAST(MIN(_window_start) AS VARCHAR) AS d FROM ${conn.schemaSql}._etl_account_windows`,
  );
  return row?.d ?? undefined;
}

/** Counts the customers the warehouse holds for the accounts windows starting in `[from, to]`, rejects included. */
export async function directoryHeld(conn: SqlConnection, job: string, from: Day, to: Day): Promise<DirectoryHeld> {
  const s = conn.schemaSql;
  const [row] = await conn.all<{ n: number | string }>(
    `SELECT COUNT(DISTINCT customer_id) AS n FROM ${s}._etl_account_windows WHERE _window_start >= CAST($1 AS DATE) AND _window_start <= CAST($2 AS DATE)`,
    [from, to],
  );
  const rejects = await conn.all<{ payload: string }>(
    `SELECT payload FROM ${s}._etl_rejects WHERE job = $1 AND stream = 'accounts' AND window_start >= CAST($2 AS DATE) AND window_start <= CAST($3 AS DATE)`,
    [job, from, to],
  );
  const keys = [...new Set(rejects.map((r) => rejectKey(r.payload)))];
  let listed = 0;
  for (let i = 0; i < keys.length; i += 500) {
    const batch = keys.slice(i, i + 500);
    const [hit] = await conn.all<{ n: number | string }>(
      `SELECT COUNT(DISTINCT customer_id) AS n FROM ${s}._etl_account_windows
        WHERE customer_id IN (${batch.map((_, k) => `$${k + 3}`).join(', ')}) AND _window_start >= CAST($1 AS DATE) AND _window_start <= CAST($2 AS DATE)`,
      [from, to, ...batch],
    );
    listed += Number(hit!.n);
  }
  return { seen: Number(row!.n), rejected: keys.length - listed };
}

/** The customer ids the accounts window starting `windowStart` listed, rejected records' keys included. */
export async function customersOfWindow(conn: SqlConnection, job: string, windowStart: Day): Promise<Set<string>> {
  const s = conn.schemaSql;
  const listed = await conn.all<{ customer_id: string }>(
    `SELECT customer_id FROM ${s}._etl_account_windows WHERE _window_start = CAST($1 AS DATE)`,
    [windowStart],
  );
  const rejects = await conn.all<{ payload: string }>(
    `SELECT payload FROM ${s}._etl_rejects WHERE job = $1 AND stream = 'accounts' AND window_start = CAST($2 AS DATE)`,
    [job, windowStart],
  );
  return new Set([...listed.map((r) => r.customer_id), ...rejects.map((r) => rejectKey(r.payload))]);
}

/** A customer an accounts window listed who is not in `accounts` (deleted behind the pipeline's back). */
export interface LostCustomer {
  customerId: string;
  /** The last window that listed the customer: re-loading it restores the row. */
  lastSeen: Day;
}

/** Customers listed by accounts windows starting in `[from, to]` but missing from `accounts`, at most `limit`. */
export async function customersMissingFromAccounts(
  conn: SqlConnection,
  from: Day,
  to: Day,
  limit: number,
): Promise<{ total: number; first: LostCustomer[] }> {
  const s = conn.schemaSql;
  const lost = `FROM ${s}._etl_account_windows w
    WHERE w._window_start >= CAST($1 AS DATE) AND w._window_start <= CAST($2 AS DATE)
      AND NOT EXISTS (SELECT 1 FROM ${s}.accounts a WHERE a.customer_id = w.customer_id)`;
  const [count] = await conn.all<{ n: number | string }>(`SELECT COUNT(DISTINCT w.customer_id) AS n ${lost}`, [
    from,
    to,
  ]);
  const rows = await conn.all<{ customer_id: string; d: string }>(
    `SELECT w.customer_id, CAST(MAX(w._window_start) AS VARCHAR) AS d ${lost} GROUP BY w.customer_id ORDER BY w.customer_id LIMIT ${Math.trunc(limit)}`,
    [from, to],
  );
  return { total: Number(count!.n), first: rows.map((r) => ({ customerId: r.customer_id, lastSeen: r.d })) };
}

/** How much of the customer directory the warehouse holds, for `status`. */
export interface DirectoryStatus {
  /** First day of the directory's windows (the window holding `source.history_start`). */
  from: Day;
  /** Every accounts window from `from` through this day is done (the day before `from` when none is). */
  completeThrough: Day;
  /** Customers in `accounts`. */
  customers: number;
}

export async function readDirectoryStatus(conn: SqlConnection, job: string, gridStart: Day): Promise<DirectoryStatus> {
  const [row] = await conn.all<{ n: number | string }>(`SELECT COUNT(*) AS n FROM ${conn.schemaSql}.accounts`);
  return {
    from: gridStart,
    completeThrough: await directoryCompleteThrough(conn, job, gridStart),
    customers: Number(row!.n),
  };
}
