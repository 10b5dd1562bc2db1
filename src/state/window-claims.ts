import { sql } from 'kysely';
import type { DestinationCapabilities } from '../load/destination.js';
import type { SqlConnection } from '../load/warehouse/sql-connection.js';
import { addDays, type Day } from '../plan/days.js';
import type { Window } from '../plan/windows.js';
import { liveRunSql } from './runs.js';
import { ClaimLostError } from './state-errors.js';

/**
 * Window claims: before a worker extracts a window it claims the window's `_etl_windows` row
 * (`claimed_by` = its run), in a short transaction of its own; the span's commit checks the claim and clears
 * it. A claim held by a run that is no longer alive (finished, abandoned, lease expired) is free. On
 * PostgreSQL candidate rows are locked with `FOR UPDATE SKIP LOCKED`, so workers claiming at the same instant
 * on several machines each get different windows without waiting on each other.
 */
export interface ClaimScope {
  job: string;
  stream: string;
  /** The claiming run. */
  runId: string;
}

/** A backfill's part of one stream: its id and its range of window starts. */
export interface BackfillStreamScope extends ClaimScope {
  backfillId: string;
  from: Day;
  to: Day;
}

function lockSuffix(capabilities: DestinationCapabilities): string {
  return capabilities.rowLocks ? ' FOR UPDATE SKIP LOCKED' : '';
}

function freeSql(conn: SqlConnection): string {
  return `(claimed_by IS NULL OR NOT ${liveRunSql(conn, 'claimed_by')})`;
}

/**
 * SQL true for a window not finished for the backfill whose id is the parameter `param`: a window is finished
 * for backfill B (done, or failed and left for a resume) when B took it last and nobody holds it.
 */
function unfinishedFor(param: string): string {
  return `(backfill_id IS NULL OR backfill_id <> ${param} OR claimed_by IS NOT NULL)`;
}

/**
 * Claims the earliest windows of a backfill's stream that are not finished for it and not held by a live
 * run, as up to `spans` spans: each of consecutive windows, at most `maxDays` days and `maxWindows` windows.
 * Returns [] when none is free.
 */
export async function claimNextSpans(
  conn: SqlConnection,
  capabilities: DestinationCapabilities,
  scope: BackfillStreamScope,
  limits: { maxDays: number; maxWindows: number; spans: number },
): Promise<Window[][]> {
  const candidates = await conn.all<{ window_start: string; window_end: string }>(
    `SELECT CAST(window_start AS VARCHAR) AS window_start, CAST(window_end AS VARCHAR) AS window_end
       FROM ${conn.schemaSql}._etl_windows
      WHERE job = $1 AND stream = $2 AND ${unfinishedFor('$3')}
        AND window_start >= CAST($4 AS DATE) AND window_start <= CAST($5 AS DATE)
        AND ${freeSql(conn)}
      ORDER BY window_start
      LIMIT ${Math.max(1, Math.trunc(limits.maxWindows * limits.spans))}${lockSuffix(capabilities)}`,
    [scope.job, scope.stream, scope.backfillId, scope.from, scope.to],
  );
  const spans: Window[][] = [];
  let span: Window[] = [];
  for (const c of candidates) {
    const window = { start: c.window_start, end: c.window_end };
    const previous = span.at(-1);
    if (
      previous &&
      (addDays(previous.end, 1) !== window.start ||
        addDays(span[0]!.start, limits.maxDays - 1) < window.end ||
        span.length >= limits.maxWindows)
    ) {
      spans.push(span);
      span = [];
      if (spans.length >= limits.spans) break;
    }
    span.push(window);
  }
  if (span.length > 0 && spans.length < limits.spans) spans.push(span);
  if (spans.length === 0) return [];
  await markClaimed(conn, scope, spans.flat(), scope.backfillId);
  return spans;
}

/**
 * Claims exactly `windows` (a span of `run`), all or none: false when one of them is held by another live run.
 * Windows without a row get a pending one first.
 */
export async function claimWindows(
  conn: SqlConnection,
  capabilities: DestinationCapabilities,
  scope: ClaimScope,
  windows: Window[],
): Promise<boolean> {
  const starts = windows.map((w) => w.start);
  const inList = starts.map((_, i) => `CAST($${i + 4} AS DATE)`).join(', ');
  const free = await conn.all<{ window_start: string }>(
    `SELECT CAST(window_start AS VARCHAR) AS window_start FROM ${conn.schemaSql}._etl_windows
      WHERE job = $1 AND stream = $2 AND window_start IN (${inList}) AND (claimed_by = $3 OR ${freeSql(conn)})${lockSuffix(capabilities)}`,
    [scope.job, scope.stream, scope.runId, ...starts],
  );
  if (free.length !== windows.length) return false;
  await markClaimed(conn, scope, windows);
  return true;
}

async function markClaimed(
  conn: SqlConnection,
  scope: ClaimScope,
  windows: Window[],
  backfillId?: string,
): Promise<void> {
  await conn.db
    .updateTable('_etl_windows')
    .set({
      claimed_by: scope.runId,
      claimed_at: sql<string>`CURRENT_TIMESTAMP`,
      ...(backfillId !== undefined ? { backfill_id: backfillId } : {}),
    })
    .where('job', '=', scope.job)
    .where('stream', '=', scope.stream)
    .where(
      'window_start',
      'in',
      windows.map((w) => w.start),
    )
    .execute();
}

/** How far a backfill has come on its windows (one stream, or all of them when `stream` is omitted). */
export interface BackfillWindowCounts {
  total: number;
  done: number;
  /** Failed for this backfill: retried when it is resumed. */
  failed: number;
  /** Neither done nor failed yet: pending, or held by a worker. */
  open: number;
  /** Held by a live worker right now. */
  held: number;
  /** Of those, held by the run named in the scope (its own lanes); 0 without one. */
  heldByRun: number;
}

/** Counts a backfill's windows by state. */
export async function backfillWindowCounts(
  conn: SqlConnection,
  scope: { job: string; backfillId: string; from: Day; to: Day; streams: string[]; runId?: string },
): Promise<BackfillWindowCounts> {
  const streams = scope.streams.map((_, i) => `$${i + 6}`).join(', ');
  const [row] = await conn.all<Record<keyof BackfillWindowCounts, number | string | null>>(
    `SELECT COUNT(*) AS total,
            SUM(CASE WHEN backfill_id = $2 AND claimed_by IS NULL AND error IS NULL AND status = 'done' THEN 1 ELSE 0 END) AS done,
            SUM(CASE WHEN backfill_id = $2 AND claimed_by IS NULL AND error IS NOT NULL THEN 1 ELSE 0 END) AS failed,
            SUM(CASE WHEN claimed_by IS NOT NULL AND ${liveRunSql(conn, 'claimed_by')} THEN 1 ELSE 0 END) AS held,
            SUM(CASE WHEN claimed_by = $5 THEN 1 ELSE 0 END) AS "heldByRun"
       FROM ${conn.schemaSql}._etl_windows
      WHERE job = $1 AND window_start >= CAST($3 AS DATE) AND window_start <= CAST($4 AS DATE) AND stream IN (${streams})`,
    [scope.job, scope.backfillId, scope.from, scope.to, scope.runId ?? '', ...scope.streams],
  );
  const total = Number(row?.total ?? 0);
  const done = Number(row?.done ?? 0);
  const failed = Number(row?.failed ?? 0);
  return {
    total,
    done,
    failed,
    open: total - done - failed,
    held: Number(row?.held ?? 0),
    heldByRun: Number(row?.heldByRun ?? 0),
  };
}

/**
 * Marks the unfinished, unheld windows of a backfill's stream from `from` on as failed for it with `error`
 * (postings whose customers are not known), and returns them.
 */
export async function failOpenWindows(
  conn: SqlConnection,
  capabilities: DestinationCapabilities,
  scope: BackfillStreamScope,
  error: string,
  finishedAt: string,
): Promise<Window[]> {
  const rows = await conn.all<{ window_start: string; window_end: string }>(
    `SELECT CAST(window_start AS VARCHAR) AS window_start, CAST(window_end AS VARCHAR) AS window_end FROM ${conn.schemaSql}._etl_windows
      WHERE job = $1 AND stream = $2 AND ${unfinishedFor('$3')}
        AND window_start >= CAST($4 AS DATE) AND window_start <= CAST($5 AS DATE) AND ${freeSql(conn)}
      ORDER BY window_start${lockSuffix(capabilities)}`,
    [scope.job, scope.stream, scope.backfillId, scope.from, scope.to],
  );
  if (rows.length === 0) return [];
  await conn.run(
    `UPDATE ${conn.schemaSql}._etl_windows
        SET run_id = CASE WHEN status = 'done' THEN run_id ELSE $1 END,
            status = CASE WHEN status = 'done' THEN 'done' ELSE 'failed' END,
            error = $2, finished_at = CAST($3 AS TIMESTAMPTZ), claimed_by = NULL, claimed_at = NULL, backfill_id = $4
      WHERE job = $5 AND stream = $6 AND window_start IN (${rows.map((_, i) => `CAST($${i + 7} AS DATE)`).join(', ')})`,
    [scope.runId, error, finishedAt, scope.backfillId, scope.job, scope.stream, ...rows.map((r) => r.window_start)],
  );
  return rows.map((r) => ({ start: r.window_start, end: r.window_end }));
}

/**
 * Checks, inside a span's transaction, that `runId` still holds every window of the span, and keeps them
 * (the rows stay locked on PostgreSQL until the commit), so no other worker can take them in between.
 *
 * @throws ClaimLostError when another worker claimed one of them since.
 */
export async function assertClaimed(
  conn: SqlConnection,
  job: string,
  stream: string,
  windows: Window[],
  runId: string,
): Promise<void> {
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
