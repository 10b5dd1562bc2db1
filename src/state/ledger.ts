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

export async function startRun(conn: SqlConnection, run: { runId: string; job: string; command: string; startedAt: string }): Promise<void> {
  await conn.db
    .insertInto('_etl_runs')
    .values({ run_id: run.runId, job: run.job, command: run.command, started_at: run.startedAt, finished_at: null, status: 'running', error: null, requests: null })
    .execute();
}

export async function finishRun(conn: SqlConnection, run: { runId: string; status: 'succeeded' | 'failed'; error: string | null; requests: number; finishedAt: string }): Promise<void> {
  await conn.db
    .updateTable('_etl_runs')
    .set({ finished_at: run.finishedAt, status: run.status, error: run.error, requests: run.requests })
    .where('run_id', '=', run.runId)
    .execute();
}

/** Marks windows done with their counts (inside the window's transaction). */
export async function recordWindowsDone(conn: SqlConnection, job: string, stream: string, runId: string, finishedAt: string, counts: WindowCounts[]): Promise<void> {
  for (const c of counts) {
    const row = {
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
    };
    await conn.db
      .insertInto('_etl_windows')
      .values(row)
      .onConflict((oc) =>
        oc.columns(['job', 'stream', 'window_start']).doUpdateSet({
          window_end: row.window_end,
          status: 'done',
          rows_extracted: row.rows_extracted,
          rows_loaded: row.rows_loaded,
          rows_rejected: row.rows_rejected,
          requests: row.requests,
          run_id: runId,
          finished_at: finishedAt,
          error: null,
        }),
      )
      .execute();
  }
}

/**
 * Notes a window that could not be loaded. A window loaded before keeps its `done` status and its rows (they
 * are still correct); only the error is recorded beside them.
 */
export async function recordWindowFailed(conn: SqlConnection, job: string, stream: string, window: Window, runId: string, finishedAt: string, error: string): Promise<void> {
  await conn.db
    .insertInto('_etl_windows')
    .values({
      job,
      stream,
      window_start: window.start,
      window_end: window.end,
      status: 'failed',
      rows_extracted: 0,
      rows_loaded: 0,
      rows_rejected: 0,
      requests: 0,
      run_id: runId,
      finished_at: finishedAt,
      error,
    })
    .onConflict((oc) => oc.columns(['job', 'stream', 'window_start']).doUpdateSet({ error, finished_at: finishedAt }))
    .execute();
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

/** Windows of (job, stream) in [from, to] already loaded. */
export async function doneWindowStarts(conn: SqlConnection, job: string, stream: string, from: Day, to: Day): Promise<Set<Day>> {
  const rows = await conn.db
    .selectFrom('_etl_windows')
    .select('window_start')
    .where('job', '=', job)
    .where('stream', '=', stream)
    .where('status', '=', 'done')
    .where('window_start', '>=', from)
    .where('window_start', '<=', to)
    .execute();
  return new Set(rows.map((r) => String(r.window_start)));
}

export { sql };
