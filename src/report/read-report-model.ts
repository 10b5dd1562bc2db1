import type { JobSettings } from '../plan/job-plan.js';
import { qualified } from '../load/warehouse/identifiers.js';
import type { SqlConnection } from '../load/warehouse/sql-connection.js';
import type { Day } from '../plan/days.js';
import { readJobStatus } from '../state/status-report.js';
import { readSchemaChanges } from '../state/schema-changes.js';
import { readUnlistedFields } from '../state/unlisted-fields.js';
import type { RejectDay, RejectReason, ReportModel, ReportWindow, TableSize, WindowStatus } from './report-model.js';
import { calendarStart, countGaps, windowGrid } from './window-grid.js';

/** What the page is about and where its facts live. */
export interface ReportRequest {
  job: string;
  jobConfig: JobSettings;
  /** The warehouse schema, unquoted. */
  schema: string;
  /** The warehouse as `Destination.describe()` gives it (no credentials). */
  warehouse: string;
  /** IANA zone of the window days (`source.timezone`). */
  timezone: string;
  /** The last day the grid runs to: the last closed day in the source's zone. */
  through: Day;
  /** Runs to show, newest first. Default 20. */
  runLimit?: number;
  /** Reject reasons to show. Default 10. */
  reasonLimit?: number;
  now?: Date;
}

/** Longest error or payload text the page carries: enough to diagnose, bounded for years of failures. */
const MAX_TEXT = 4000;

/**
 * Reads everything the status page shows, from the warehouse alone: what `status` reads (watermarks, lag, runs,
 * backfills, the run lock), every window of every stream, rejects per day and their most frequent reasons, and
 * the row count of every table of the schema.
 */
export async function readReportModel(conn: SqlConnection, request: ReportRequest): Promise<ReportModel> {
  const { job, jobConfig } = request;
  const status = await readJobStatus(conn, job, jobConfig, request.through, request.runLimit ?? 20);
  const recorded = await readWindows(conn, job);
  const streams = status.streams.map((s) => {
    const all = recorded.get(s.stream) ?? [];
    const from = calendarStart(all, jobConfig.first_day);
    const windows = windowGrid(
      all.filter((w) => w.start >= from),
      from,
      request.through,
      jobConfig.window_days,
    );
    return { ...s, windows, gaps: countGaps(windows) };
  });
  return {
    ...status,
    streams,
    generatedAt: (request.now ?? new Date()).toISOString(),
    warehouse: request.warehouse,
    timezone: request.timezone,
    windowDays: jobConfig.window_days,
    firstDay: jobConfig.first_day,
    rejectThreshold: jobConfig.reject_threshold,
    rejectDays: await readRejectDays(conn, job),
    unlistedFields: await readUnlistedFields(conn),
    schemaChanges: await readSchemaChanges(conn, { limit: 50 }),
    rejectReasons: await readRejectReasons(conn, job, request.reasonLimit ?? 10),
    tables: await readTableSizes(conn, request.schema),
  };
}

async function readWindows(conn: SqlConnection, job: string): Promise<Map<string, ReportWindow[]>> {
  const rows = await conn.all<{
    stream: string;
    window_start: string;
    window_end: string;
    status: string;
    rows_extracted: number | string;
    rows_loaded: number | string;
    rows_rejected: number | string;
    requests: number | string | null;
    finished_at: string | null;
    run_id: string | null;
    error: string | null;
  }>(
    `SELECT stream, CAST(window_start AS VARCHAR) AS window_start, CAST(window_end AS VARCHAR) AS window_end, status,
            rows_extracted, rows_loaded, rows_rejected, requests, CAST(finished_at AS VARCHAR) AS finished_at, run_id, LEFT(error, ${MAX_TEXT}) AS error
       FROM ${conn.schemaSql}._etl_windows WHERE job = $1 ORDER BY stream, window_start`,
    [job],
  );
  const byStream = new Map<string, ReportWindow[]>();
  for (const r of rows) {
    const list = byStream.get(r.stream) ?? [];
    list.push({
      start: r.window_start,
      end: r.window_end,
      status: windowStatus(r.status),
      extracted: Number(r.rows_extracted),
      loaded: Number(r.rows_loaded),
      rejected: Number(r.rows_rejected),
      requests: Number(r.requests ?? 0),
      finishedAt: r.finished_at,
      runId: r.run_id,
      error: r.error,
    });
    byStream.set(r.stream, list);
  }
  return byStream;
}

/** A ledger status the page knows; anything else would be a newer tool's status, shown as pending. */
function windowStatus(status: string): WindowStatus {
  return status === 'done' || status === 'failed' ? status : 'pending';
}

async function readRejectDays(conn: SqlConnection, job: string): Promise<RejectDay[]> {
  const rows = await conn.all<{ day: string; stream: string; n: number | string }>(
    `SELECT CAST(window_start AS VARCHAR) AS day, stream, COUNT(*) AS n FROM ${conn.schemaSql}._etl_rejects WHERE job = $1 GROUP BY window_start, stream ORDER BY window_start, stream`,
    [job],
  );
  return rows.map((r) => ({ day: r.day, stream: r.stream, count: Number(r.n) }));
}

/**
 * The most frequent reasons, with the latest record rejected for each. Errors quote the offending value
 * (`birthdate: not a date YYYY-MM-DD: "1990-02-31"`); the value is blanked for grouping, so one defect is one reason.
 */
async function readRejectReasons(conn: SqlConnection, job: string, limit: number): Promise<RejectReason[]> {
  const reason = `regexp_replace(error, '"[^"]*"', '"…"', 'g')`;
  const rows = await conn.all<{
    stream: string;
    reason: string;
    n: number | string;
    error: string;
    payload: string;
    window_start: string;
  }>(
    `SELECT stream, reason, n, error, payload, window_start FROM (
       SELECT stream, ${reason} AS reason, LEFT(error, ${MAX_TEXT}) AS error, LEFT(payload, ${MAX_TEXT}) AS payload, CAST(window_start AS VARCHAR) AS window_start,
              COUNT(*) OVER (PARTITION BY stream, ${reason}) AS n,
              ROW_NUMBER() OVER (PARTITION BY stream, ${reason} ORDER BY rejected_at DESC, window_start DESC) AS k
         FROM ${conn.schemaSql}._etl_rejects WHERE job = $1) r
      WHERE k = 1 ORDER BY n DESC, stream, reason LIMIT ${Math.trunc(limit)}`,
    [job],
  );
  return rows.map((r) => ({
    stream: r.stream,
    reason: r.reason,
    count: Number(r.n),
    example: { error: r.error, payload: r.payload, windowStart: r.window_start },
  }));
}

/** Every table of the schema and its rows (the pipeline's own tables too). */
async function readTableSizes(conn: SqlConnection, schema: string): Promise<TableSize[]> {
  const tables = await conn.all<{ table_name: string }>(
    `SELECT table_name FROM information_schema.tables WHERE table_schema = $1 AND table_type = 'BASE TABLE' AND table_catalog = current_database() ORDER BY table_name`,
    [schema],
  );
  const out: TableSize[] = [];
  for (const { table_name } of tables) {
    const [row] = await conn.all<{ n: number | string }>(`SELECT COUNT(*) AS n FROM ${qualified(schema, table_name)}`);
    out.push({ table: table_name, rows: Number(row?.n ?? 0) });
  }
  // data tables first, the pipeline's own after them
  return out.sort(
    (a, b) => Number(a.table.startsWith('_')) - Number(b.table.startsWith('_')) || (a.table < b.table ? -1 : 1),
  );
}
