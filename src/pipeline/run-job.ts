import { randomUUID } from 'node:crypto';
import { readUnlistedFields } from '../state/unlisted-fields.js';
import { hostname } from 'node:os';
import type { Destination } from '../load/destination.js';
import type { Logger } from '../log/logger.js';
import { redact } from '../log/redact.js';
import { formatWindow } from '../plan/windows.js';
import { beginRun, finishRun } from '../state/runs.js';
import type { JobRunRequest, JobRunResult } from './job-run-request.js';
import { JobRun } from './job-run.js';
import { keepLease } from './lease-keeper.js';
import { RunInterruptedError, RunStop } from './run-stop.js';
import { shareSourceRate, type SourceRateShare } from './source-rate-share.js';

export type { JobRunRequest, JobRunResult, JobWork, WindowFailure } from './job-run-request.js';

/**
 * Loads a job's windows, recording the run in `_etl_runs`. Every span is claimed before it is extracted
 * (claim → extract → commit), so two workers never load the same window at once. A window that fails is
 * recorded and reported; the others go on. Each span commits on its own, so work done survives a later failure.
 *
 * @throws JobBusyError when `exclusive` and another run of the job is alive (nothing was started).
 */
export async function runJob(request: JobRunRequest): Promise<JobRunResult> {
  const { plan, destination, logger } = request;
  const runId = request.runId ?? randomUUID();
  const { leaseSeconds } = plan;
  const backfill = request.work.kind === 'backfill' ? request.work.backfill : undefined;
  const result: JobRunResult = {
    runId,
    loaded: [],
    directory: { loaded: [], empty: 0 },
    empty: new Map(),
    failed: [],
    requests: 0,
    newFields: [],
  };
  const stop = request.stop ?? new RunStop();
  const startedAt = new Date().toISOString();
  const lock = request.exclusive ? `run:${plan.name}` : undefined;
  await destination.ledgerTransaction((conn) =>
    beginRun(conn, destination.capabilities, {
      runId,
      job: plan.name,
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
  const log = logger.child({ job: plan.name, runId });
  log.info(
    {
      command: request.command,
      destination: destination.describe(),
      ...(backfill ? { backfillId: backfill.backfillId, joined: !backfill.created } : {}),
    },
    'run started',
  );
  let unexpected: string | undefined;
  let rateShare: SourceRateShare | undefined;
  try {
    rateShare = await shareSourceRate(destination, request.api.http, plan.requestsPerSecond, log);
    await new JobRun(request, runId, result, stop, log).load();
    result.newFields = await destination.withConnection((conn) => readUnlistedFields(conn, runId));
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
async function recordEnd(
  destination: Destination,
  result: JobRunResult,
  stop: RunStop,
  unexpected: string | undefined,
  log: Logger,
): Promise<void> {
  const first = result.failed[0];
  const error =
    unexpected ??
    (first
      ? `${result.failed.length} window(s) failed; first: ${first.stream} ${formatWindow(first.window)}: ${first.error}`
      : null);
  const status = stop.reason instanceof RunInterruptedError ? 'interrupted' : error ? 'failed' : 'succeeded';
  await destination
    .ledgerTransaction((conn) =>
      finishRun(conn, {
        runId: result.runId,
        status,
        error,
        requests: result.requests,
        finishedAt: new Date().toISOString(),
      }),
    )
    .catch((e) => log.error({ err: e }, 'could not record the end of the run'));
  log.info(
    { windowsLoaded: result.loaded.length, windowsFailed: result.failed.length, requests: result.requests },
    'run finished',
  );
}
