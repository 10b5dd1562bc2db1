import { createHash } from 'node:crypto';
import type { SqlConnection } from '../load/warehouse/sql-connection.js';
import type { Day } from '../plan/days.js';
import type { Window } from '../plan/windows.js';
import { ensureWindowRows } from './ledger.js';

/**
 * A backfill: one range of some streams of a job, recorded in `_etl_backfills`. Its scope is the job, the
 * streams, the range and the window grid; while a backfill of a scope is `open`, every `backfill` call for the
 * same scope joins it — the same command again after a kill resumes it, and the same command on several
 * machines at once shares it. It becomes `done` when every window is done for it; `--restart` supersedes an
 * open one with a fresh generation that re-extracts everything.
 */
export interface Backfill {
  backfillId: string;
  job: string;
  streams: string[];
  /** First and last window start. */
  from: Day;
  to: Day;
  generation: number;
  /** This call started the backfill; false when it joined an open one (a resume, or another worker). */
  created: boolean;
}

export interface BackfillRequest {
  job: string;
  /** In the order the job loads them. */
  streams: string[];
  /** The windows of the range on the job's grid (the same for every stream). */
  windows: Window[];
  /** Window length and grid origin: a different grid is a different backfill. */
  grid: string;
  restart: boolean;
  runId: string;
}

/** The scope key of a backfill: everything that makes two calls the same backfill. */
export function backfillScope(job: string, streams: string[], from: Day, to: Day, grid: string): string {
  return `${job}|${streams.join(',')}|${from}..${to}|${grid}`;
}

/**
 * Joins the open backfill of the request's scope, or starts one (a new generation), and makes sure every window
 * of it has an `_etl_windows` row to claim. Joining also hands the windows that failed for it back to the
 * queue, so a resume retries them. Runs in the caller's transaction.
 */
export async function openBackfill(conn: SqlConnection, request: BackfillRequest): Promise<Backfill> {
  const from = request.windows[0]!.start;
  const to = request.windows.at(-1)!.start;
  const scope = backfillScope(request.job, request.streams, from, to, request.grid);
  const latest = await latestOf(conn, scope);
  let backfill: Backfill;
  if (latest && latest.status === 'open' && !request.restart) {
    backfill = { ...latest, created: false };
    // failed windows are retried by whoever resumes
    await conn.run(
      `UPDATE ${conn.schemaSql}._etl_windows SET backfill_id = NULL WHERE backfill_id = $1 AND claimed_by IS NULL AND error IS NOT NULL`,
      [latest.backfillId],
    );
  } else {
    if (latest && latest.status === 'open') {
      await conn.run(
        `UPDATE ${conn.schemaSql}._etl_backfills SET status = 'superseded', finished_at = CURRENT_TIMESTAMP WHERE backfill_id = $1 AND status = 'open'`,
        [latest.backfillId],
      );
    }
    const generation = (latest?.generation ?? 0) + 1;
    const backfillId = `bf-${createHash('sha256').update(scope).digest('hex').slice(0, 10)}-${generation}`;
    const inserted = await conn.all<{ backfill_id: string }>(
      `INSERT INTO ${conn.schemaSql}._etl_backfills (backfill_id, job, scope, generation, streams, range_from, range_to, status, started_at, finished_at)
       VALUES ($1, $2, $3, $4, $5, CAST($6 AS DATE), CAST($7 AS DATE), 'open', CURRENT_TIMESTAMP, NULL)
       ON CONFLICT (backfill_id) DO NOTHING RETURNING backfill_id`,
      [backfillId, request.job, scope, generation, request.streams.join(','), from, to],
    );
    // Another worker may have started the same generation a moment ago: then this one joins it.
    backfill = {
      backfillId,
      job: request.job,
      streams: request.streams,
      from,
      to,
      generation,
      created: inserted.length > 0,
    };
  }
  for (const stream of request.streams)
    await ensureWindowRows(conn, request.job, stream, request.windows, request.runId);
  return backfill;
}

async function latestOf(
  conn: SqlConnection,
  scope: string,
): Promise<(Omit<Backfill, 'created'> & { status: string }) | undefined> {
  const [row] = await conn.all<{
    backfill_id: string;
    job: string;
    streams: string;
    range_from: string;
    range_to: string;
    generation: number | string;
    status: string;
  }>(
    `SELECT backfill_id, job, streams, CAST(range_from AS VARCHAR) AS range_from, CAST(range_to AS VARCHAR) AS range_to, generation, status
       FROM ${conn.schemaSql}._etl_backfills WHERE scope = $1 ORDER BY generation DESC LIMIT 1`,
    [scope],
  );
  if (!row) return undefined;
  return {
    backfillId: row.backfill_id,
    job: row.job,
    streams: row.streams.split(','),
    from: row.range_from,
    to: row.range_to,
    generation: Number(row.generation),
    status: row.status,
  };
}

/** Marks a backfill done (every window done for it). */
export async function finishBackfill(conn: SqlConnection, backfillId: string): Promise<void> {
  await conn.run(
    `UPDATE ${conn.schemaSql}._etl_backfills SET status = 'done', finished_at = CURRENT_TIMESTAMP WHERE backfill_id = $1 AND status = 'open'`,
    [backfillId],
  );
}
