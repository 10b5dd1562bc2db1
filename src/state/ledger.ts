import { sql } from 'kysely';
import { addDays, type Day } from '../plan/days.js';
import type { Window } from '../plan/windows.js';
import type { SqlConnection } from '../load/sql-connection.js';

/** Counts of one loaded window, as `_etl_windows` keeps them. */
export interface WindowCounts {
  window: Window;
  extracted: number;
  loaded: number;
  rejected: number;
  requests: number;
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
  // one statement per 500 windows: a span of a year's windows is recorded in one round trip, not hundreds
  for (let i = 0; i < counts.length; i += 500) {
    const rows = counts.slice(i, i + 500).map((c) => ({
      job,
      stream,
      window_start: c.window.start,
      window_end: c.window.end,
      status: 'done',
      rows_extracted: c.extracted,
      rows_loaded: c.loaded,
      rows_rejected: c.rejected,
      requests: c.requests,
      run_id: runId,
      finished_at: finishedAt,
      error: null,
      claimed_by: null,
      claimed_at: null,
      backfill_id: mark.backfillId ?? null,
    }));
    await conn.db
      .insertInto('_etl_windows')
      .values(rows)
      .onConflict((oc) =>
        oc.columns(['job', 'stream', 'window_start']).doUpdateSet((eb) => ({
          window_end: eb.ref('excluded.window_end'),
          status: 'done',
          rows_extracted: eb.ref('excluded.rows_extracted'),
          rows_loaded: eb.ref('excluded.rows_loaded'),
          rows_rejected: eb.ref('excluded.rows_rejected'),
          requests: eb.ref('excluded.requests'),
          run_id: runId,
          finished_at: finishedAt,
          error: null,
          claimed_by: null,
          claimed_at: null,
          ...(mark.backfillId !== undefined ? { backfill_id: mark.backfillId } : {}),
        })),
      )
      .execute();
  }
}

/** A span's windows are no longer claimed by the run committing them: another worker took them over. */
export class ClaimLostError extends Error {
  override readonly name = 'ClaimLostError';
}

/**
 * Checks, inside a span's transaction, that `runId` still holds every window of the span, and keeps them
 * (the rows stay locked on PostgreSQL until the commit), so no other worker can take them in between.
 *
 * @throws ClaimLostError when another worker claimed one of them since.
 */
export async function assertClaimed(conn: SqlConnection, job: string, stream: string, windows: Window[], runId: string): Promise<void> {
  const result = await conn.db
    .updateTable('_etl_windows')
    .set({ claimed_by: runId })
    .where('job', '=', job)
    .where('stream', '=', stream)
    .where(
      'window_start',
      'in',
      windows.map((w) => w.start),
    )
    .where('claimed_by', '=', runId)
    .executeTakeFirst();
  if (Number(result.numUpdatedRows) !== windows.length) {
    throw new ClaimLostError(
      `${stream} ${windows[0]!.start}..${windows.at(-1)!.end}: another worker claimed these windows while this one loaded them (its lease had run out); its load is dropped`,
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
): Promise<void> {
  await ensureWindowRows(conn, job, stream, [window], runId);
  await conn.run(
    `UPDATE ${conn.schemaSql}._etl_windows
        SET run_id = CASE WHEN status = 'done' THEN run_id ELSE $1 END,
            status = CASE WHEN status = 'done' THEN 'done' ELSE 'failed' END,
            error = $2, finished_at = CAST($3 AS TIMESTAMPTZ), claimed_by = NULL, claimed_at = NULL
      WHERE job = $4 AND stream = $5 AND window_start = CAST($6 AS DATE) AND (claimed_by IS NULL OR claimed_by = $1)`,
    [runId, error, finishedAt, job, stream, window.start],
  );
}

/**
 * Gives windows that have no row yet a `pending` one, so they can be claimed. An existing row stays as it is,
 * unless the window asked for now ends later: a window cut short at the end of an earlier range (a backfill
 * `--to` inside it, a run through yesterday) takes the longer end and, if it was done, is pending again, since
 * its last days were never read.
 */
export async function ensureWindowRows(conn: SqlConnection, job: string, stream: string, windows: Window[], runId: string): Promise<void> {
  for (let i = 0; i < windows.length; i += 500) {
    const rows = windows.slice(i, i + 500).map((w) => ({
      job,
      stream,
      window_start: w.start,
      window_end: w.end,
      status: 'pending',
      rows_extracted: 0,
      rows_loaded: 0,
      rows_rejected: 0,
      requests: 0,
      run_id: runId,
      finished_at: null,
      error: null,
      claimed_by: null,
      claimed_at: null,
      backfill_id: null,
    }));
    await conn.db
      .insertInto('_etl_windows')
      .values(rows)
      .onConflict((oc) =>
        oc
          .columns(['job', 'stream', 'window_start'])
          .doUpdateSet({
            window_end: sql.ref('excluded.window_end'),
            status: sql`CASE WHEN ${sql.ref('_etl_windows.status')} = 'done' THEN 'pending' ELSE ${sql.ref('_etl_windows.status')} END`,
          })
          .where(sql.ref('_etl_windows.window_end'), '<', sql.ref('excluded.window_end')),
      )
      .execute();
  }
}

/** The day through which (job, stream) is complete, or undefined before its first window. */
export async function readWatermark(conn: SqlConnection, job: string, stream: string): Promise<Day | undefined> {
  const row = await conn.db.selectFrom('_etl_watermarks').select('complete_through').where('job', '=', job).where('stream', '=', stream).executeTakeFirst();
  return row?.complete_through;
}

/**
 * Moves the watermark forward across done windows that join it without a gap; never backwards. Before the
 * first window the watermark stands at the day before the job's first day.
 */
export async function advanceWatermark(conn: SqlConnection, job: string, stream: string, firstDay: Day, runId: string, now: string): Promise<Day | undefined> {
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
    .onConflict((oc) => oc.columns(['job', 'stream']).doUpdateSet({ complete_through: through, updated_at: now, run_id: runId }))
    .execute();
  return through;
}
