import { sql } from 'kysely';
import type { DestinationCapabilities } from '../load/destination.js';
import type { SqlConnection } from '../load/warehouse/sql-connection.js';
import { JobBusyError } from './state-errors.js';

/**
 * A run is one process working on a job (`run`, `backfill`, `demo`), recorded in `_etl_runs`. It is alive
 * while its status is `running` and its lease (`expires_at`) lies ahead; the process renews the lease while it
 * works. Window claims and the run lock belong to a run, so they fall free when it finishes or dies.
 */
export interface RunStart {
  runId: string;
  job: string;
  command: string;
  startedAt: string;
  /** Host name and process id: a dead process on the same host is noticed without waiting for its lease. */
  host: string;
  pid: number;
  leaseSeconds: number;
  backfillId?: string;
  /** A lock the run must hold for its whole length, e.g. `run:nightly` (see {@link JobBusyError}). */
  lock?: string;
}

/**
 * SQL that is true when the run named by `runIdSql` is alive (running, lease not expired). The inner alias is
 * one no caller uses: a caller's `_etl_runs r` would otherwise be shadowed, and `r.run_id = r.run_id` is true of
 * every run as soon as one is alive.
 */
export function liveRunSql(conn: SqlConnection, runIdSql: string): string {
  return `EXISTS (SELECT 1 FROM ${conn.schemaSql}._etl_runs live_run WHERE live_run.run_id = ${runIdSql} AND live_run.status = 'running' AND live_run.expires_at > CURRENT_TIMESTAMP)`;
}

function leaseEnd(seconds: number) {
  return sql<string>`CURRENT_TIMESTAMP + CAST(${Math.max(1, Math.round(seconds))} AS INTEGER) * INTERVAL '1 second'`;
}

/**
 * Records a run as started and, when it asks for one, takes its lock — in the caller's transaction, so a run
 * that finds the lock taken leaves no trace. Runs found dead on the way are marked `abandoned` first.
 *
 * @throws JobBusyError when `start.lock` is held by another live run.
 */
export async function beginRun(
  conn: SqlConnection,
  capabilities: DestinationCapabilities,
  start: RunStart,
): Promise<void> {
  await reapAbandonedRuns(conn, capabilities, { host: start.host, pid: start.pid, now: start.startedAt });
  await conn.db
    .insertInto('_etl_runs')
    .values({
      run_id: start.runId,
      job: start.job,
      command: start.command,
      started_at: start.startedAt,
      finished_at: null,
      status: 'running',
      error: null,
      requests: null,
      host: start.host,
      pid: start.pid,
      expires_at: leaseEnd(start.leaseSeconds),
      backfill_id: start.backfillId ?? null,
    })
    .execute();
  if (start.lock !== undefined) await takeLock(conn, capabilities, start.lock, start.runId);
}

async function takeLock(
  conn: SqlConnection,
  capabilities: DestinationCapabilities,
  lock: string,
  runId: string,
): Promise<void> {
  const locks = `${conn.schemaSql}._etl_locks`;
  // The row exists once; two processes creating it at once wait on each other's insert, then both lock it below.
  await conn.run(
    `INSERT INTO ${locks} (lock_name, run_id, acquired_at) VALUES ($1, NULL, NULL) ON CONFLICT (lock_name) DO NOTHING`,
    [lock],
  );
  const [row] = await conn.all<{
    run_id: string | null;
    alive: boolean | string | number;
    host: string | null;
    pid: number | null;
    started_at: string | null;
  }>(
    `SELECT l.run_id, ${liveRunSql(conn, 'l.run_id')} AS alive, r.host, r.pid, CAST(r.started_at AS VARCHAR) AS started_at
       FROM ${locks} l LEFT JOIN ${conn.schemaSql}._etl_runs r ON r.run_id = l.run_id
      WHERE l.lock_name = $1${capabilities.rowLocks ? ' FOR UPDATE OF l' : ''}`,
    [lock],
  );
  if (row?.run_id && row.run_id !== runId && truthy(row.alive)) {
    const who = [
      row.pid !== null ? `pid ${row.pid}` : '',
      row.host ? `on ${row.host}` : '',
      row.started_at ? `since ${row.started_at.slice(0, 19)}` : '',
    ]
      .filter(Boolean)
      .join(' ');
    throw new JobBusyError(
      `${lock.replace(/^run:/, 'job ')} is already running (run ${row.run_id}${who ? `, ${who}` : ''}); nothing was attempted`,
    );
  }
  await conn.run(`UPDATE ${locks} SET run_id = $1, acquired_at = CURRENT_TIMESTAMP WHERE lock_name = $2`, [
    runId,
    lock,
  ]);
}

/** Pushes the run's lease forward; false when the run is no longer `running` (another process presumed it dead). */
export async function renewRun(conn: SqlConnection, runId: string, leaseSeconds: number): Promise<boolean> {
  const result = await conn.db
    .updateTable('_etl_runs')
    .set({ expires_at: leaseEnd(leaseSeconds) })
    .where('run_id', '=', runId)
    .where('status', '=', 'running')
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/**
 * Records the end of a run and lets go of what it held: its locks, and claims of windows it did not finish
 * (they become pending again, for any backfill).
 */
export async function finishRun(
  conn: SqlConnection,
  run: {
    runId: string;
    status: 'succeeded' | 'failed' | 'interrupted';
    error: string | null;
    requests: number;
    /** Requests tried again; undefined leaves the column as it is. */
    retries?: number;
    finishedAt: string;
  },
): Promise<void> {
  await conn.db
    .updateTable('_etl_runs')
    .set({
      finished_at: run.finishedAt,
      status: run.status,
      error: run.error,
      requests: run.requests,
      ...(run.retries === undefined ? {} : { retries: run.retries }),
      expires_at: null,
    })
    .where('run_id', '=', run.runId)
    .execute();
  await conn.run(
    `UPDATE ${conn.schemaSql}._etl_windows SET claimed_by = NULL, claimed_at = NULL, backfill_id = NULL WHERE claimed_by = $1`,
    [run.runId],
  );
  await conn.run(`UPDATE ${conn.schemaSql}._etl_locks SET run_id = NULL, acquired_at = NULL WHERE run_id = $1`, [
    run.runId,
  ]);
}

/** How many runs are alive (running, lease ahead) on this warehouse, whatever their job or command. */
export async function countLiveRuns(conn: SqlConnection): Promise<number> {
  const [row] = await conn.all<{ n: number | string }>(
    `SELECT COUNT(*) AS n FROM ${conn.schemaSql}._etl_runs r WHERE ${liveRunSql(conn, 'r.run_id')}`,
  );
  return Number(row?.n ?? 0);
}

/**
 * Marks `abandoned` the runs that still say `running` but whose process is gone: on a single-process warehouse
 * (DuckDB) every other running run, since this process holds the file; elsewhere those whose lease expired,
 * and those on this host whose process no longer exists. Their claims and locks are free from then on.
 */
export async function reapAbandonedRuns(
  conn: SqlConnection,
  capabilities: DestinationCapabilities,
  me: { host: string; pid: number; now: string },
): Promise<number> {
  const running = await conn.all<{
    run_id: string;
    host: string | null;
    pid: number | string | null;
    expired: boolean | string | number;
  }>(
    `SELECT run_id, host, pid, (expires_at IS NULL OR expires_at <= CURRENT_TIMESTAMP) AS expired FROM ${conn.schemaSql}._etl_runs WHERE status = 'running'`,
  );
  const dead = running.filter((r) => {
    if (r.host === me.host && Number(r.pid) === me.pid) return false;
    if (!capabilities.multiProcess) return true;
    if (truthy(r.expired)) return true;
    return r.host === me.host && r.pid !== null && !processExists(Number(r.pid));
  });
  for (const r of dead) {
    await conn.run(
      `UPDATE ${conn.schemaSql}._etl_runs SET status = 'abandoned', finished_at = CAST($1 AS TIMESTAMPTZ), error = $2 WHERE run_id = $3 AND status = 'running'`,
      [me.now, 'the process ended without finishing the run (killed or crashed); its windows are free again', r.run_id],
    );
  }
  return dead.length;
}

function processExists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it exists, under another user
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** A boolean as DuckDB (true) or PostgreSQL through pg (true, or 't' in some paths) hands it out. */
export function truthy(value: unknown): boolean {
  return value === true || value === 't' || value === 'true' || value === 1 || value === '1';
}
