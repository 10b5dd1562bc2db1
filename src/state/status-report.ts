import type { JobSettings } from '../plan/job-plan.js';
import type { SchemaChangeRow } from './schema-changes.js';
import type { UnlistedField } from './unlisted-fields.js';
import type { IntegrationRow } from './integrations.js';
import type { LedgerTables, SqlConnection } from '../load/warehouse/sql-connection.js';
import { daysBetween, type Day } from '../plan/days.js';
import type { DirectoryStatus } from './directory.js';
import type { HistoryStatus } from './history-status.js';
import { readEventBookmark } from './event-bookmark.js';
import { liveRunSql } from './runs.js';
import type { StateCoverage } from './state-coverage.js';
import { backfillWindowCounts } from './window-claims.js';
import { readWarehouseRelease, type WarehouseRelease } from './warehouse-release.js';

/** The state of one stream of a job. */
export interface StreamStatus {
  stream: string;
  /** Last day loaded without a gap, or null before the first window. */
  completeThrough: Day | null;
  /** Days between the watermark and the last closed day (null before the first window). */
  lagDays: number | null;
  windowsDone: number;
  windowsFailed: number;
  /** Windows planned (by a backfill) and not loaded yet. */
  windowsPending: number;
  rowsLoaded: number;
  /** Rejected records currently kept in `_etl_rejects`. */
  rejects: number;
  /** Fields loaded as NULL because their value could not be read, kept in `_etl_field_rejects`. */
  fieldRejects: number;
  requests: number;
  /** Of the requests, those tried again after a failure. */
  retries: number;
}

export interface RunSummary {
  runId: string;
  command: string;
  /** `running`, `succeeded`, `failed`, `interrupted` (stopped by SIGINT or SIGTERM), or `abandoned` (its process died without finishing). */
  status: string;
  host: string | null;
  pid: number | null;
  backfillId: string | null;
  startedAt: string;
  finishedAt: string | null;
  durationSeconds: number | null;
  requests: number | null;
  /** Requests it tried again (null for runs recorded before they were counted). */
  retries: number | null;
  windows: number;
  rowsLoaded: number;
  rowsRejected: number;
  error: string | null;
}

/** A backfill of the job: its range and how far it has come. */
export interface BackfillSummary {
  backfillId: string;
  streams: string[];
  from: Day;
  to: Day;
  /** `open` (running, or interrupted: the same command resumes it), `done`, or `superseded` (by `--restart`). */
  status: string;
  startedAt: string;
  finishedAt: string | null;
  windowsTotal: number;
  windowsDone: number;
  windowsFailed: number;
  /** Runs working on it now. */
  liveWorkers: number;
}

export interface JobStatus {
  job: string;
  lastClosedDay: Day;
  /** The releases of loyalty-etl that migrated and opened the warehouse. */
  warehouseRelease: WarehouseRelease;
  streams: StreamStatus[];
  /** The live run holding the job's run lock, if any. */
  runLock: { runId: string; host: string | null; pid: number | null; since: string | null } | null;
  /** Open backfills, then the latest finished ones. */
  backfills: BackfillSummary[];
  runs: RunSummary[];
  /** For a job whose postings ask the customers of webhook events: how far it has read them. */
  webhookEvents: WebhookEventsStatus | null;
  /**
   * Webhook events acknowledged but not storable in `loyalty_events`, held in `_etl_event_quarantine` with their
   * reasons (present only when there are any): each wants a person's look.
   */
  quarantinedEvents?: { events: number; lastAt: string | null };
  /** With a DuckDB warehouse: events the webhook receiver spooled that no run has ingested into `loyalty_events` yet. */
  spooledEvents?: number;
  /** The raw archive of the service's answers: where, how much, and from when to when (none when it is off). */
  archive?: { root: string; bytes: number; files: number; oldest?: string; newest?: string };
  /** For a job with accounts: how much of the customer directory is loaded. */
  directory?: DirectoryStatus;
  /** For a job with state streams: how far their observations cover the customer directory. */
  customerState?: StateCoverage[];
  /** The history tables of the job's streams: versions and the observations they come from. */
  history?: HistoryStatus[];
  /** The integration `source.integration_token` named when `check` last asked (`_etl_integrations`), never its secrets. */
  integration?: IntegrationRow | null;
  /** Members the service sends that the spec does not list, the newest first (`_etl_unlisted_fields`). */
  unlistedFields?: UnlistedField[];
  /** The last changes of what analysts read, the newest first, and how many there are (`_etl_schema_changes`). */
  schemaChanges?: { changes: SchemaChangeRow[]; total: number };
}

/** The loyalty webhook events stored, and those a job's postings have not asked about yet. */
export interface WebhookEventsStatus {
  stored: number;
  lastReceivedAt: string | null;
  /** `_etl_event_bookmarks.through_seq` of the job's postings (0 before the first span). */
  bookmark: number;
  /** Events after the bookmark: their customers are asked by the next spans that reach their day. */
  backlog: number;
}

/** Reads what `status` shows from the ledger tables. */
export async function readJobStatus(
  conn: SqlConnection,
  job: string,
  jobConfig: JobSettings,
  lastClosed: Day,
  runLimit = 5,
): Promise<JobStatus> {
  const quarantined = await readQuarantinedEvents(conn);
  return {
    job,
    lastClosedDay: lastClosed,
    warehouseRelease: await readWarehouseRelease(conn),
    streams: await readStreams(conn, job, jobConfig.streams, lastClosed),
    runLock: await readRunLock(conn, job),
    backfills: await readBackfills(conn, job),
    webhookEvents:
      jobConfig.streams.includes('loyalty_postings') && jobConfig.postings.customers === 'webhook'
        ? await readWebhookEvents(conn, job)
        : null,
    runs: await readRuns(conn, job, runLimit),
    ...(quarantined.events > 0 ? { quarantinedEvents: quarantined } : {}),
  };
}

/** The webhook events held in quarantine (`_etl_event_quarantine`), and when the last was put there. */
export async function readQuarantinedEvents(conn: SqlConnection): Promise<{ events: number; lastAt: string | null }> {
  const [row] = await conn.all<{ n: number | string | bigint; last: string | null }>(
    `SELECT COUNT(*) AS n, CAST(MAX(quarantined_at) AS VARCHAR) AS last FROM ${q(conn)}._etl_event_quarantine`,
  );
  return { events: Number(row?.n ?? 0), lastAt: row?.last ?? null };
}

/** Per stream: its watermark and lag, and its windows, rows, rejects and requests by window status. */
async function readStreams(
  conn: SqlConnection,
  job: string,
  names: readonly string[],
  lastClosed: Day,
): Promise<StreamStatus[]> {
  const marks = await conn.db
    .selectFrom('_etl_watermarks')
    .select(['stream', 'complete_through'])
    .where('job', '=', job)
    .execute();
  const windows = await conn.all<{
    stream: string;
    status: string;
    n: string | number;
    rows: string | number;
    requests: string | number;
    retries: string | number;
  }>(
    `SELECT stream, status, COUNT(*) AS n, COALESCE(SUM(rows_loaded), 0) AS rows, COALESCE(SUM(requests), 0) AS requests, COALESCE(SUM(retries), 0) AS retries FROM ${q(conn)}._etl_windows WHERE job = $1 GROUP BY stream, status`,
    [job],
  );
  const rejects = await conn.all<{ stream: string; n: string | number }>(
    `SELECT stream, COUNT(*) AS n FROM ${q(conn)}._etl_rejects WHERE job = $1 GROUP BY stream`,
    [job],
  );
  const fieldRejects = await conn.all<{ stream: string; n: string | number }>(
    `SELECT stream, COUNT(*) AS n FROM ${q(conn)}._etl_field_rejects WHERE job = $1 GROUP BY stream`,
    [job],
  );
  return names.map((stream): StreamStatus => {
    const mark = marks.find((m) => m.stream === stream)?.complete_through ?? null;
    const mine = windows.filter((w) => w.stream === stream);
    const done = mine.find((w) => w.status === 'done');
    return {
      stream,
      completeThrough: mark,
      lagDays: mark === null ? null : Math.max(0, daysBetween(mark, lastClosed)),
      windowsDone: Number(done?.n ?? 0),
      windowsFailed: Number(mine.find((w) => w.status === 'failed')?.n ?? 0),
      windowsPending: Number(mine.find((w) => w.status === 'pending')?.n ?? 0),
      rowsLoaded: Number(done?.rows ?? 0),
      rejects: Number(rejects.find((r) => r.stream === stream)?.n ?? 0),
      fieldRejects: Number(fieldRejects.find((r) => r.stream === stream)?.n ?? 0),
      requests: mine.reduce((sum, w) => sum + Number(w.requests), 0),
      retries: mine.reduce((sum, w) => sum + Number(w.retries), 0),
    };
  });
}

/** The job's last `limit` runs (or the run `runId` alone), newest first, with what each loaded. */
export async function readRuns(
  conn: SqlConnection,
  job: string,
  limit: number,
  runId?: string,
): Promise<JobStatus['runs']> {
  const runs = await conn.all<{
    run_id: string;
    command: string;
    status: string;
    host: string | null;
    pid: number | string | null;
    backfill_id: string | null;
    started_at: string;
    finished_at: string | null;
    secs: number | string | null;
    requests: number | string | null;
    retries: number | string | null;
    windows: number | string;
    rows: number | string;
    rejected: number | string;
    error: string | null;
  }>(
    `SELECT r.run_id, r.command, r.status, r.host, r.pid, r.backfill_id, CAST(r.started_at AS VARCHAR) AS started_at, CAST(r.finished_at AS VARCHAR) AS finished_at,
            EXTRACT(EPOCH FROM (r.finished_at - r.started_at)) AS secs, r.requests, r.retries, r.error,
            (SELECT COUNT(*) FROM ${q(conn)}._etl_windows w WHERE w.run_id = r.run_id AND w.status = 'done') AS windows,
            (SELECT COALESCE(SUM(rows_loaded), 0) FROM ${q(conn)}._etl_windows w WHERE w.run_id = r.run_id AND w.status = 'done') AS rows,
            (SELECT COALESCE(SUM(rows_rejected), 0) FROM ${q(conn)}._etl_windows w WHERE w.run_id = r.run_id AND w.status = 'done') AS rejected
       FROM ${q(conn)}._etl_runs r WHERE r.job = $1${runId === undefined ? '' : ' AND r.run_id = $2'} ORDER BY r.started_at DESC LIMIT ${Math.trunc(limit)}`,
    runId === undefined ? [job] : [job, runId],
  );
  return runs.map((r) => ({
    runId: r.run_id,
    command: r.command,
    status: r.status,
    host: r.host,
    pid: r.pid === null ? null : Number(r.pid),
    backfillId: r.backfill_id,
    startedAt: r.started_at,
    finishedAt: r.finished_at,
    durationSeconds: r.secs === null ? null : Math.round(Number(r.secs) * 10) / 10,
    requests: r.requests === null ? null : Number(r.requests),
    retries: r.retries === null ? null : Number(r.retries),
    windows: Number(r.windows),
    rowsLoaded: Number(r.rows),
    rowsRejected: Number(r.rejected),
    error: r.error,
  }));
}

async function readRunLock(conn: SqlConnection, job: string): Promise<JobStatus['runLock']> {
  const [row] = await conn.all<{
    run_id: string;
    host: string | null;
    pid: number | string | null;
    since: string | null;
  }>(
    `SELECT l.run_id, r.host, r.pid, CAST(l.acquired_at AS VARCHAR) AS since FROM ${q(conn)}._etl_locks l JOIN ${q(conn)}._etl_runs r ON r.run_id = l.run_id
      WHERE l.lock_name = $1 AND ${liveRunSql(conn, 'l.run_id')}`,
    [`run:${job}`],
  );
  return row
    ? { runId: row.run_id, host: row.host, pid: row.pid === null ? null : Number(row.pid), since: row.since }
    : null;
}

async function readBackfills(conn: SqlConnection, job: string, finishedLimit = 3): Promise<BackfillSummary[]> {
  const rows = await conn.all<
    Pick<
      LedgerTables['_etl_backfills'],
      'backfill_id' | 'streams' | 'range_from' | 'range_to' | 'status' | 'started_at' | 'finished_at'
    >
  >(
    `SELECT * FROM (
       SELECT backfill_id, streams, CAST(range_from AS VARCHAR) AS range_from, CAST(range_to AS VARCHAR) AS range_to, status,
              CAST(started_at AS VARCHAR) AS started_at, CAST(finished_at AS VARCHAR) AS finished_at,
              ROW_NUMBER() OVER (PARTITION BY status = 'open' ORDER BY started_at DESC) AS n
         FROM ${q(conn)}._etl_backfills WHERE job = $1) b
      WHERE status = 'open' OR n <= ${Math.trunc(finishedLimit)}
      ORDER BY status = 'open' DESC, started_at DESC`,
    [job],
  );
  const out: BackfillSummary[] = [];
  for (const b of rows) {
    const streams = b.streams.split(',');
    const counts = await backfillWindowCounts(conn, {
      job,
      backfillId: b.backfill_id,
      from: b.range_from,
      to: b.range_to,
      streams,
    });
    const [workers] = await conn.all<{ n: number | string }>(
      `SELECT COUNT(*) AS n FROM ${q(conn)}._etl_runs r WHERE r.backfill_id = $1 AND ${liveRunSql(conn, 'r.run_id')}`,
      [b.backfill_id],
    );
    out.push({
      backfillId: b.backfill_id,
      streams,
      from: b.range_from,
      to: b.range_to,
      status: b.status,
      startedAt: b.started_at,
      finishedAt: b.finished_at,
      windowsTotal: counts.total,
      windowsDone: counts.done,
      windowsFailed: counts.failed,
      liveWorkers: Number(workers?.n ?? 0),
    });
  }
  return out;
}

async function readWebhookEvents(conn: SqlConnection, job: string): Promise<WebhookEventsStatus> {
  const bookmark = (await readEventBookmark(conn, job, 'loyalty_postings')) ?? 0;
  const [row] = await conn.all<{ stored: number | string; backlog: number | string; last: string | null }>(
    `SELECT COUNT(*) AS stored, COUNT(*) FILTER (WHERE seq > $1) AS backlog, CAST(MAX(received_at) AS VARCHAR) AS last FROM ${q(conn)}.loyalty_events`,
    [bookmark],
  );
  return {
    stored: Number(row?.stored ?? 0),
    lastReceivedAt: row?.last ?? null,
    bookmark,
    backlog: Number(row?.backlog ?? 0),
  };
}

function q(conn: SqlConnection): string {
  return conn.schemaSql;
}
