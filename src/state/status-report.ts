import type { JobConfig } from '../config/config-schema.js';
import type { SqlConnection } from '../load/sql-connection.js';
import { daysBetween, type Day } from '../plan/days.js';

/** The state of one stream of a job. */
export interface StreamStatus {
  stream: string;
  /** Last day loaded without a gap, or null before the first window. */
  completeThrough: Day | null;
  /** Days between the watermark and the last closed day (null before the first window). */
  lagDays: number | null;
  windowsDone: number;
  windowsFailed: number;
  rowsLoaded: number;
  /** Rejected records currently kept in `_etl_rejects`. */
  rejects: number;
  requests: number;
}

export interface RunSummary {
  runId: string;
  command: string;
  status: string;
  startedAt: string;
  finishedAt: string | null;
  durationSeconds: number | null;
  requests: number | null;
  windows: number;
  rowsLoaded: number;
  rowsRejected: number;
  error: string | null;
}

export interface JobStatus {
  job: string;
  lastClosedDay: Day;
  streams: StreamStatus[];
  runs: RunSummary[];
}

/** Reads what `status` shows from the ledger tables. */
export async function readJobStatus(conn: SqlConnection, job: string, jobConfig: JobConfig, lastClosed: Day, runLimit = 5): Promise<JobStatus> {
  const marks = await conn.db.selectFrom('_etl_watermarks').select(['stream', 'complete_through']).where('job', '=', job).execute();
  const windows = await conn.all<{ stream: string; status: string; n: string | number; rows: string | number; requests: string | number }>(
    `SELECT stream, status, COUNT(*) AS n, COALESCE(SUM(rows_loaded), 0) AS rows, COALESCE(SUM(requests), 0) AS requests FROM ${q(conn)}._etl_windows WHERE job = $1 GROUP BY stream, status`,
    [job],
  );
  const rejects = await conn.all<{ stream: string; n: string | number }>(`SELECT stream, COUNT(*) AS n FROM ${q(conn)}._etl_rejects WHERE job = $1 GROUP BY stream`, [job]);
  const streams = jobConfig.streams.map((stream): StreamStatus => {
    const mark = marks.find((m) => m.stream === stream)?.complete_through ?? null;
    const mine = windows.filter((w) => w.stream === stream);
    const done = mine.find((w) => w.status === 'done');
    return {
      stream,
      completeThrough: mark,
      lagDays: mark === null ? null : Math.max(0, daysBetween(mark, lastClosed)),
      windowsDone: Number(done?.n ?? 0),
      windowsFailed: Number(mine.find((w) => w.status === 'failed')?.n ?? 0),
      rowsLoaded: Number(done?.rows ?? 0),
      rejects: Number(rejects.find((r) => r.stream === stream)?.n ?? 0),
      requests: mine.reduce((sum, w) => sum + Number(w.requests), 0),
    };
  });
  const runs = await conn.all<{
    run_id: string;
    command: string;
    status: string;
    started_at: string;
    finished_at: string | null;
    secs: number | string | null;
    requests: number | string | null;
    windows: number | string;
    rows: number | string;
    rejected: number | string;
    error: string | null;
  }>(
    `SELECT r.run_id, r.command, r.status, CAST(r.started_at AS VARCHAR) AS started_at, CAST(r.finished_at AS VARCHAR) AS finished_at,
            EXTRACT(EPOCH FROM (r.finished_at - r.started_at)) AS secs, r.requests, r.error,
            (SELECT COUNT(*) FROM ${q(conn)}._etl_windows w WHERE w.run_id = r.run_id AND w.status = 'done') AS windows,
            (SELECT COALESCE(SUM(rows_loaded), 0) FROM ${q(conn)}._etl_windows w WHERE w.run_id = r.run_id AND w.status = 'done') AS rows,
            (SELECT COALESCE(SUM(rows_rejected), 0) FROM ${q(conn)}._etl_windows w WHERE w.run_id = r.run_id AND w.status = 'done') AS rejected
       FROM ${q(conn)}._etl_runs r WHERE r.job = $1 ORDER BY r.started_at DESC LIMIT ${Math.trunc(runLimit)}`,
    [job],
  );
  return {
    job,
    lastClosedDay: lastClosed,
    streams,
    runs: runs.map((r) => ({
      runId: r.run_id,
      command: r.command,
      status: r.status,
      startedAt: r.started_at,
      finishedAt: r.finished_at,
      durationSeconds: r.secs === null ? null : Math.round(Number(r.secs) * 10) / 10,
      requests: r.requests === null ? null : Number(r.requests),
      windows: Number(r.windows),
      rowsLoaded: Number(r.rows),
      rowsRejected: Number(r.rejected),
      error: r.error,
    })),
  };
}

function q(conn: SqlConnection): string {
  return conn.schemaSql;
}
