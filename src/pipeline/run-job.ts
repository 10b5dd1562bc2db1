import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { StreamName } from '../config/config-schema.js';
import type { ResolvedConfig } from '../config/load-config.js';
import type { Destination } from '../load/destination.js';
import type { Logger } from '../log/logger.js';
import { redact } from '../log/redact.js';
import { formatWindow, type Window } from '../plan/windows.js';
import type { LoyaltyApi } from '../source/loyalty-api.js';
import type { Backfill } from '../state/backfills.js';
import type { WindowCounts } from '../state/ledger.js';
import { beginRun, finishRun } from '../state/runs.js';
import { JobRun } from './job-run.js';
import { keepLease } from './lease-keeper.js';
import { RunInterruptedError, RunStop } from './run-stop.js';
import { shareSourceRate, type SourceRateShare } from './source-rate-share.js';

/** A window that could not be loaded, and why. */
export interface WindowFailure {
  stream: StreamName;
  window: Window;
  error: string;
}

export interface JobRunResult {
  runId: string;
  /** Windows of the streams asked for that were loaded. */
  loaded: Array<WindowCounts & { stream: StreamName }>;
  /** The customer directory made complete before them: accounts windows loaded, and windows found empty. */
  directory: { loaded: WindowCounts[]; empty: number };
  /** Windows of the streams asked for that the source reported empty, recorded done without reading each. */
  empty: Map<StreamName, number>;
  failed: WindowFailure[];
  requests: number;
}

/**
 * What a run loads: windows planned by the command (`run`, the demo), or a backfill whose windows are claimed
 * from the warehouse and shared with any other worker of the same backfill.
 */
export type JobWork = { kind: 'planned'; windows: Map<StreamName, Window[]> } | { kind: 'backfill'; backfill: Backfill };

export interface JobRunRequest {
  config: ResolvedConfig;
  job: string;
  /** `run` or `backfill …`, as recorded in `_etl_runs`. */
  command: string;
  work: JobWork;
  /** Spans loaded at once, at most (a stream may take fewer: its `lanes`). Streams run in {@link STREAM_ORDER}; spans of a stream run in parallel. */
  concurrency: number;
  api: LoyaltyApi;
  destination: Destination;
  logger: Logger;
  /** The run's id (default: a new UUID). */
  runId?: string;
  /** Hold the job's run lock (`run:<job>` in `_etl_locks`) for the whole run: a second one gets JobBusyError. */
  exclusive?: boolean;
  /** Seconds the run's claims outlive its last lease renewal, should the process die (default 60). */
  leaseSeconds?: number;
  /** Refresh `profiles` and `profile_fields` first (default true). */
  refreshReferenceData?: boolean;
  /** Called after every span, and after a stretch of windows the source reports empty, for progress display. */
  onSpanDone?: (stream: StreamName, counts: WindowCounts[]) => void;
  /** Stops the run early (an interruption); the run also stops by itself when the source refuses the credentials. */
  stop?: RunStop;
}

/**
 * Loads a job's windows, recording the run in `_etl_runs`. Every span is claimed before it is extracted
 * (claim → extract → commit), so two workers never load the same window at once. A window that fails is
 * recorded and reported; the others go on. Each span commits on its own, so work done survives a later failure.
 *
 * @throws JobBusyError when `exclusive` and another run of the job is alive (nothing was started).
 */
export async function runJob(request: JobRunRequest): Promise<JobRunResult> {
  const { config, destination, logger } = request;
  const runId = request.runId ?? randomUUID();
  const leaseSeconds = request.leaseSeconds ?? config.leaseSeconds;
  const backfill = request.work.kind === 'backfill' ? request.work.backfill : undefined;
  const result: JobRunResult = { runId, loaded: [], directory: { loaded: [], empty: 0 }, empty: new Map(), failed: [], requests: 0 };
  const stop = request.stop ?? new RunStop();
  const startedAt = new Date().toISOString();
  const lock = request.exclusive ? `run:${request.job}` : undefined;
  await destination.ledgerTransaction((conn) =>
    beginRun(conn, destination.capabilities, {
      runId,
      job: request.job,
      command: request.command,
      startedAt,
      host: hostname(),
      pid: process.pid,
      leaseSeconds,
      backfillId: backfill?.backfillId,
      lock,
    }),
  );
  const lease = keepLease(destination, runId, leaseSeconds, logger);
  const letGoOfApi = stop.callsOff(request.api);
  const log = logger.child({ job: request.job, runId });
  log.info(
    { command: request.command, destination: destination.describe(), ...(backfill ? { backfillId: backfill.backfillId, joined: !backfill.created } : {}) },
    'run started',
  );
  let unexpected: string | undefined;
  let rateShare: SourceRateShare | undefined;
  try {
    rateShare = await shareSourceRate(destination, request.api.http, config.source.requests_per_second, log);
    await new JobRun(request, runId, result, stop, log).load();
  } catch (error) {
    unexpected = redact(error instanceof Error ? error.message : String(error));
    throw error;
  } finally {
    lease.stop();
    rateShare?.stop();
    letGoOfApi();
    await recordEnd(destination, result, stop, unexpected, log);
  }
  return result;
}

/** Records how the run ended: `interrupted`, `failed` (with its first failure or what stopped it) or `succeeded`. */
async function recordEnd(destination: Destination, result: JobRunResult, stop: RunStop, unexpected: string | undefined, log: Logger): Promise<void> {
  const first = result.failed[0];
  const error = unexpected ?? (first ? `${result.failed.length} window(s) failed; first: ${first.stream} ${formatWindow(first.window)}: ${first.error}` : null);
  const status = stop.reason instanceof RunInterruptedError ? 'interrupted' : error ? 'failed' : 'succeeded';
  await destination
    .ledgerTransaction((conn) => finishRun(conn, { runId: result.runId, status, error, requests: result.requests, finishedAt: new Date().toISOString() }))
    .catch((e) => log.error({ err: e }, 'could not record the end of the run'));
  log.info({ windowsLoaded: result.loaded.length, windowsFailed: result.failed.length, requests: result.requests }, 'run finished');
}
