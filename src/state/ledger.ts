import { addDays, type Day } from '../plan/days.js';
import type { Window } from '../plan/windows.js';
import type { SqlConnection } from '../load/warehouse/sql-connection.js';
import { columnLists } from '../load/warehouse/values-list.js';

/**
 * Windows written per ledger statement. A statement carries only what differs from window to window (the
 * bounds, and the counts of a done window), so a year of windows is a round trip, not hundreds.
 */
const LEDGER_BATCH = 1000;

/** Counts of one loaded window, as `_etl_windows` keeps them. */
export interface WindowCounts {
  window: Window;
  extracted: number;
  loaded: number;
  rejected: number;
  /** Fields loaded as NULL because their value could not be read (`_etl_field_rejects`). */
  fieldsRejected?: number;
  requests: number;
  /** Of the requests, those tried again after a failure. */
  retries?: number;
}

/** What a window's commit knows about the claim it was loaded under. */
export interface ClaimMark {
  /** The backfill the window was loaded for: it counts as done for that backfill. */
  backfillId?: string;
}

/**
 * Marks windows done with their counts (inside the window's transaction), and lets go of their claim. A window
 * loaded for a backfill keeps that backfill's id; one loaded by `run` keeps whatever backfill id it had.
 */
export async function recordWindowsDone(
  conn: SqlConnection,
  job: string,
  stream: string,
  runId: string,
  finishedAt: string,
  counts: WindowCounts[],
  mark: ClaimMark = {},
): Promise<void> {
  const backfill = mark.backfillId !== undefined ? ', backfill_id = excluded.backfill_id' : '';
  for (let i = 0; i < counts.length; i += LEDGER_BATCH) {
    const rows = counts
      .slice(i, i + LEDGER_BATCH)
      .map((c) => [c.window.start, c.window.end, c.extracted, c.loaded, c.rejected, c.requests, c.retries ?? 0]);
    const list = columnLists(rows, ['DATE', 'DATE', 'BIGINT', 'BIGINT', 'BIGINT', 'BIGINT', 'BIGINT'], 6);
    await conn.run(
      `INSERT INTO ${conn.schemaSql}._etl_windows (job, stream, window_start, window_end, status, rows_extracted, rows_loaded, rows_rejected, requests,
                                                 retries, run_id, finished_at, error, claimed_by, claimed_at, backfill_id)
       SELECT $1, $2, v.s, v.e, 'done', v.x, v.l, v.r, v.q, v.t, $3, CAST($4 AS TIMESTAMPTZ), NULL, NULL, NULL, $5
         FROM ${list.sql} v (s, e, x, l, r, q, t)
       ON CONFLICT (job, stream, window_start) DO UPDATE
          SET window_end = excluded.window_end, status = 'done', rows_extracted = excluded.rows_extracted, rows_loaded = excluded.rows_loaded,
              rows_rejected = excluded.rows_rejected, requests = excluded.requests, retries = excluded.retries, run_id = excluded.run_id, finished_at = excluded.finished_at,
              error = NULL, claimed_by = NULL, claimed_at = NULL${backfill}`,
      [job, stream, runId, finishedAt, mark.backfillId ?? null, ...list.params],
    );
  }
}

/**
 * Notes a window that could not be loaded, and lets go of its claim. A window loaded before keeps its `done`
 * status, its rows (they are still correct) and the run that loaded them; only the error is recorded beside
 * them. The error also marks the window as failed for the backfill that claimed it, which retries it when
 * that backfill is resumed. A window another worker holds now is left alone.
 */
export async function recordWindowFailed(
  conn: SqlConnection,
  job: string,
  stream: string,
  window: Window,
  runId: string,
  finishedAt: string,
  error: string,
): Promise<{ repeated: boolean }> {
  await ensureWindowRows(conn, job, stream, [window], runId);
  // the same error as the window's last failure (a window fails once a run): whatever it is, it did not pass by itself
  const [before] = await conn.all<{ error: string | null }>(
    `SELECT error FROM ${conn.schemaSql}._etl_windows WHERE job = $1 AND stream = $2 AND window_start = CAST($3 AS DATE)`,
    [job, stream, window.start],
  );
  const repeated = before?.error === error;
  await conn.run(
    `UPDATE ${conn.schemaSql}._etl_windows
        SET run_id = CASE WHEN status = 'done' THEN run_id ELSE $1 END,
            status = CASE WHEN status = 'done' THEN 'done' ELSE 'failed' END,
            error = $2, finished_at = CAST($3 AS TIMESTAMPTZ), claimed_by = NULL, claimed_at = NULL
      WHERE job = $4 AND stream = $5 AND window_start = CAST($6 AS DATE) AND (claimed_by IS NULL OR claimed_by = $1)`,
    [runId, error, finishedAt, job, stream, window.start],
  );
  return { repeated };
}

/**
 * Gives windows that have no row yet a `pending` one, so they can be claimed. An existing row stays as it is,
 * unless the window asked for now ends later: a window cut short at the end of an earlier range (a backfill
 * `--to` inside it, a run through yesterday) takes the longer end and, if it was done, is pending again, since
 * its last days were never read.
 */
export async function ensureWindowRows(
  conn: SqlConnection,
  job: string,
  stream: string,
  windows: Window[],
  runId: string,
): Promise<void> {
  for (let i = 0; i < windows.length; i += LEDGER_BATCH) {
    const list = columnLists(
      windows.slice(i, i + LEDGER_BATCH).map((w) => [w.start, w.end]),
      ['DATE', 'DATE'],
      4,
    );
    await conn.run(
      `INSERT INTO ${conn.schemaSql}._etl_windows (job, stream, window_start, window_end, status, rows_extracted, rows_loaded, rows_rejected, requests,
                                                 run_id, finished_at, error, claimed_by, claimed_at, backfill_id)
       SELECT $1, $2, v.s, v.e, 'pending', 0, 0, 0, 0, $3, NULL, NULL, NULL, NULL, NULL FROM ${list.sql} v (s, e)
       ON CONFLICT (job, stream, window_start) DO UPDATE
          SET window_end = excluded.window_end, status = CASE WHEN _etl_windows.status = 'done' THEN 'pending' ELSE _etl_windows.status END
        WHERE _etl_windows.window_end < excluded.window_end`,
      [job, stream, runId, ...list.params],
    );
  }
}

/** The day through which (job, stream) is complete, or undefined before its first window. */
export async function readWatermark(conn: SqlConnection, job: string, stream: string): Promise<Day | undefined> {
  const row = await conn.db
    .selectFrom('_etl_watermarks')
    .select('complete_through')
    .where('job', '=', job)
    .where('stream', '=', stream)
    .executeTakeFirst();
  return row?.complete_through;
}

/**
 * Moves the watermark forward across done windows that join it without a gap; never backwards. Before the
 * first window the watermark stands at the day before the job's first day.
 */
export async function advanceWatermark(
  conn: SqlConnection,
  job: string,
  stream: string,
  firstDay: Day,
  runId: string,
  now: string,
): Promise<Day | undefined> {
  const current = (await readWatermark(conn, job, stream)) ?? addDays(firstDay, -1);
  const done = await conn.db
    .selectFrom('_etl_windows')
    .select(['window_start', 'window_end'])
    .where('job', '=', job)
    .where('stream', '=', stream)
    .where('status', '=', 'done')
    .where('window_end', '>', current)
    .orderBy('window_start')
    .execute();
  let through = current;
  for (const w of done) {
    if (w.window_start > addDays(through, 1)) break;
    if (w.window_end > through) through = w.window_end;
  }
  if (through === current) return current;
  await conn.db
    .insertInto('_etl_watermarks')
    .values({ job, stream, complete_through: through, updated_at: now, run_id: runId })
    .onConflict((oc) =>
      oc.columns(['job', 'stream']).doUpdateSet({ complete_through: through, updated_at: now, run_id: runId }),
    )
    .execute();
  return through;
}
