import { randomUUID } from 'node:crypto';
import pLimit from 'p-limit';
import type { JobConfig, StreamName } from '../config/config-schema.js';
import type { ResolvedConfig } from '../config/load-config.js';
import type { Destination } from '../load/destination.js';
import type { Logger } from '../log/logger.js';
import { redact } from '../log/redact.js';
import { formatWindow, groupWindows, type Window } from '../plan/windows.js';
import type { LoyaltyApi } from '../source/loyalty-api.js';
import { finishRun, recordWindowFailed, startRun, type WindowCounts } from '../state/ledger.js';
import { STREAM_ORDER, streamDefinition } from '../streams/registry.js';
import { refreshProfiles } from '../streams/profiles.js';
import { loadSpan } from './load-span.js';

/** A window that could not be loaded, and why. */
export interface WindowFailure {
  stream: StreamName;
  window: Window;
  error: string;
}

export interface JobRunResult {
  runId: string;
  loaded: Array<WindowCounts & { stream: StreamName }>;
  failed: WindowFailure[];
  requests: number;
}

export interface JobRunRequest {
  config: ResolvedConfig;
  job: string;
  /** `run` or `backfill …`, as recorded in `_etl_runs`. */
  command: string;
  /** The windows to load, per stream. Streams run in {@link STREAM_ORDER}; windows of a stream run in parallel. */
  windows: Map<StreamName, Window[]>;
  concurrency: number;
  api: LoyaltyApi;
  destination: Destination;
  logger: Logger;
  /** Refresh `profiles` and `profile_fields` first (default true). */
  refreshReferenceData?: boolean;
  /** Called after every span, for progress display. */
  onSpanDone?: (stream: StreamName, counts: WindowCounts[]) => void;
}

/**
 * Postings ask the customers `accounts` knows; where accounts failed in this run, the postings of that range
 * and later would miss customers, so those windows fail too instead of loading incomplete.
 */
function withoutUnloadedAccounts(windows: Window[], result: JobRunResult, job: string): Window[] {
  const failed = result.failed.filter((f) => f.stream === 'accounts').map((f) => f.window.start).sort()[0];
  if (failed === undefined) return windows;
  for (const window of windows.filter((w) => w.end >= failed)) {
    result.failed.push({ stream: 'loyalty_postings', window, error: `accounts of ${failed} and later are not loaded for job ${job}, so the customers to ask are not known` });
  }
  return windows.filter((w) => w.end < failed);
}

/**
 * Loads the planned windows of a job, recording the run in `_etl_runs`. A window that fails is recorded and
 * reported; the others go on. Each span commits on its own, so work done survives a later failure.
 */
export async function runJob(request: JobRunRequest): Promise<JobRunResult> {
  const { config, destination, logger } = request;
  const jobConfig: JobConfig = config.jobs[request.job]!;
  const runId = randomUUID();
  const result: JobRunResult = { runId, loaded: [], failed: [], requests: 0 };
  await destination.withConnection((conn) => startRun(conn, { runId, job: request.job, command: request.command, startedAt: new Date().toISOString() }));
  const log = logger.child({ job: request.job, runId });
  log.info({ command: request.command, destination: destination.describe() }, 'run started');
  let unexpected: string | undefined;

  try {
    if (request.refreshReferenceData !== false) {
      // Reference data is not windowed: a failure is reported but does not fail the windows.
      await refreshProfiles(request.api, destination, runId).then(
        (n) => log.info(n, 'profiles refreshed'),
        (error) => log.warn({ err: error }, 'profiles could not be refreshed; the previous ones are kept'),
      );
    }
    for (const name of STREAM_ORDER) {
      let windows = request.windows.get(name);
      if (!windows || windows.length === 0) continue;
      if (name === 'loyalty_postings') windows = withoutUnloadedAccounts(windows, result, request.job);
      const stream = streamDefinition(name);
      const spans = groupWindows(windows, stream.maxWindowsPerSpan(jobConfig) * jobConfig.window_days);
      const limit = pLimit(request.concurrency);
      await Promise.all(
        spans.map((span) =>
          limit(async () => {
            const api = request.api.scoped();
            const ctx = { api, pageSize: config.source.page_size, concurrency: config.source.concurrency, timezone: config.source.timezone, job: request.job, jobConfig, destination, logger: log };
            try {
              const counts = await loadSpan(stream, span, ctx, destination, { job: request.job, runId, firstDay: jobConfig.first_day, rejectThreshold: jobConfig.reject_threshold }, log);
              result.loaded.push(...counts.map((c) => ({ ...c, stream: name })));
              request.onSpanDone?.(name, counts);
            } catch (error) {
              const message = redact(error instanceof Error ? error.message : String(error));
              log.error({ stream: name, window: formatWindow({ start: span[0]!.start, end: span.at(-1)!.end }), err: error }, 'window failed');
              for (const window of span) {
                result.failed.push({ stream: name, window, error: message });
                await destination.withConnection((conn) => recordWindowFailed(conn, request.job, name, window, runId, new Date().toISOString(), message)).catch((e) => log.error({ err: e }, 'could not record the failed window'));
              }
            } finally {
              result.requests += api.counter.requests;
            }
          }),
        ),
      );
    }
  } catch (error) {
    unexpected = redact(error instanceof Error ? error.message : String(error));
    throw error;
  } finally {
    const first = result.failed[0];
    const error = unexpected ?? (first ? `${result.failed.length} window(s) failed; first: ${first.stream} ${formatWindow(first.window)}: ${first.error}` : null);
    await destination
      .withConnection((conn) => finishRun(conn, { runId, status: error ? 'failed' : 'succeeded', error, requests: result.requests, finishedAt: new Date().toISOString() }))
      .catch((e) => log.error({ err: e }, 'could not record the end of the run'));
    log.info({ windowsLoaded: result.loaded.length, windowsFailed: result.failed.length, requests: result.requests }, 'run finished');
  }
  return result;
}
