import { Gauge, Registry, type RegistryContentType } from 'prom-client';
import type { SqlConnection } from '../load/warehouse/sql-connection.js';
import type { Day } from '../plan/days.js';
import type { JobSettings } from '../plan/job-plan.js';
import { readJobStatus, readRuns, type RunSummary } from '../state/status-report.js';

/** How a run can end, as `_etl_runs.status` records it: one series each in `loyalty_etl_last_run_outcome`. */
export const RUN_OUTCOMES = ['succeeded', 'failed', 'interrupted', 'abandoned', 'running'] as const;

/** What the process that just ran knows better than the warehouse: its own run, and its failures per stream. */
export interface RunOfThisProcess {
  runId: string;
  /** Windows of each stream that failed in this run (a window done before keeps `done` in the ledger). */
  windowsFailed: Readonly<Record<string, number>>;
}

/**
 * The job's metrics in Prometheus' text format, read from the warehouse alone (what `status --json` reads), in a
 * registry of their own: `loyalty_etl_*` per stream (rows, rejects, windows by status, lag, requests and retries) and per job
 * (the last run's outcome, duration, requests and retries, and the last success of each command). Every value is a
 * gauge: the warehouse holds the totals, so a scrape reads them rather than counting events.
 *
 * @example
 * const registry = await jobMetrics(conn, { job: 'nightly', jobConfig, lastClosedDay: '2026-11-28' });
 * await registry.metrics(); // '# HELP loyalty_etl_rows_loaded …'
 */
export async function jobMetrics(
  conn: SqlConnection,
  request: { job: string; jobConfig: JobSettings; lastClosedDay: Day; run?: RunOfThisProcess; openMetrics?: boolean },
): Promise<Registry<RegistryContentType>> {
  const { job } = request;
  const status = await readJobStatus(conn, job, request.jobConfig, request.lastClosedDay, 1);
  const registry = new Registry<RegistryContentType>();
  if (request.openMetrics) registry.setContentType(Registry.OPENMETRICS_CONTENT_TYPE);
  const gauge = (name: string, help: string, labelNames: string[]) =>
    new Gauge({ name: `loyalty_etl_${name}`, help, labelNames, registers: [registry] });

  const rows = gauge('rows_loaded', 'Rows the done windows of the stream loaded.', ['job', 'stream']);
  const rejected = gauge('records_rejected', 'Records kept in _etl_rejects.', ['job', 'stream']);
  const fields = gauge('fields_rejected', 'Fields loaded as NULL, kept in _etl_field_rejects.', ['job', 'stream']);
  const windows = gauge('windows', 'Windows of the stream by status: done, failed, pending.', [
    'job',
    'stream',
    'status',
  ]);
  const lag = gauge('lag_days', 'Days between the watermark of the stream and the last closed day.', ['job', 'stream']);
  const requests = gauge('requests', 'Source requests of the windows of the stream, retries included.', [
    'job',
    'stream',
  ]);
  const retries = gauge('retries', 'Of the requests of the windows of the stream, those tried again after a failure.', [
    'job',
    'stream',
  ]);
  for (const s of status.streams) {
    const labels = { job, stream: s.stream };
    rows.set(labels, s.rowsLoaded);
    rejected.set(labels, s.rejects);
    fields.set(labels, s.fieldRejects);
    windows.set({ ...labels, status: 'done' }, s.windowsDone);
    windows.set({ ...labels, status: 'failed' }, s.windowsFailed);
    windows.set({ ...labels, status: 'pending' }, s.windowsPending);
    if (s.lagDays !== null) lag.set(labels, s.lagDays);
    requests.set(labels, s.requests);
    retries.set(labels, s.retries);
  }

  const last = await lastRun(conn, job, request.run?.runId, status.runs[0]);
  if (last) lastRunMetrics(gauge, job, last, await windowsFailedOf(conn, last.runId, request.run));
  const success = gauge(
    'last_success_timestamp_seconds',
    'When the last run of each command that succeeded ended (Unix time).',
    ['job', 'command'],
  );
  for (const [command, seconds] of await lastSuccesses(conn, job)) success.set({ job, command }, seconds);
  return registry;
}

/** The run the metrics speak of: the process's own, or else the job's newest. */
async function lastRun(
  conn: SqlConnection,
  job: string,
  runId: string | undefined,
  newest: RunSummary | undefined,
): Promise<(RunSummary & { finishedSeconds: number | null }) | undefined> {
  const id = runId ?? newest?.runId;
  if (id === undefined) return undefined;
  const [run] = await readRuns(conn, job, 1, id);
  if (!run) return undefined;
  const [row] = await conn.all<{ finished: number | string | null }>(
    `SELECT EXTRACT(EPOCH FROM finished_at) AS finished FROM ${conn.schemaSql}._etl_runs WHERE run_id = $1`,
    [run.runId],
  );
  return { ...run, finishedSeconds: row?.finished == null ? null : Number(row.finished) };
}

function lastRunMetrics(
  gauge: (name: string, help: string, labels: string[]) => Gauge,
  job: string,
  run: RunSummary & { finishedSeconds: number | null },
  windowsFailed: Record<string, number>,
): void {
  const command = run.command.split(' ')[0]!;
  const outcome = gauge('last_run_outcome', 'How the last run of the job ended: 1 for its outcome, 0 for the others.', [
    'job',
    'command',
    'outcome',
  ]);
  for (const o of RUN_OUTCOMES) outcome.set({ job, command, outcome: o }, run.status === o ? 1 : 0);
  const labels = { job, command };
  if (run.durationSeconds !== null)
    gauge('last_run_duration_seconds', 'How long the last run of the job took.', ['job', 'command']).set(
      labels,
      run.durationSeconds,
    );
  if (run.finishedSeconds !== null)
    gauge('last_run_finished_timestamp_seconds', 'When the last run of the job ended (Unix time).', [
      'job',
      'command',
    ]).set(labels, run.finishedSeconds);
  gauge('last_run_requests', 'Source requests the last run of the job made, retries included.', ['job', 'command']).set(
    labels,
    run.requests ?? 0,
  );
  gauge('last_run_retries', 'Source requests the last run of the job tried again.', ['job', 'command']).set(
    labels,
    run.retries ?? 0,
  );
  gauge('last_run_rows_loaded', 'Rows the last run of the job loaded.', ['job', 'command']).set(labels, run.rowsLoaded);
  const failed = gauge('last_run_windows_failed', 'Windows of each stream the last run of the job could not load.', [
    'job',
    'stream',
  ]);
  for (const [stream, n] of Object.entries(windowsFailed)) failed.set({ job, stream }, n);
}

/** Failed windows per stream of the last run: the process's own count, or those still failed in the ledger. */
async function windowsFailedOf(
  conn: SqlConnection,
  runId: string,
  own: RunOfThisProcess | undefined,
): Promise<Record<string, number>> {
  if (own?.runId === runId) return { ...own.windowsFailed };
  const rows = await conn.all<{ stream: string; n: number | string }>(
    `SELECT stream, COUNT(*) AS n FROM ${conn.schemaSql}._etl_windows WHERE run_id = $1 AND status = 'failed' GROUP BY stream`,
    [runId],
  );
  return Object.fromEntries(rows.map((r) => [r.stream, Number(r.n)]));
}

/** When the last succeeded run of each command (its first word: run, backfill, replay, demo) ended. */
async function lastSuccesses(conn: SqlConnection, job: string): Promise<Map<string, number>> {
  const rows = await conn.all<{ command: string; finished: number | string | null }>(
    `SELECT command, MAX(EXTRACT(EPOCH FROM finished_at)) AS finished FROM ${conn.schemaSql}._etl_runs
      WHERE job = $1 AND status = 'succeeded' GROUP BY command`,
    [job],
  );
  const latest = new Map<string, number>();
  for (const r of rows) {
    if (r.finished === null) continue;
    const command = r.command.split(' ')[0]!;
    latest.set(command, Math.max(latest.get(command) ?? 0, Number(r.finished)));
  }
  return latest;
}
