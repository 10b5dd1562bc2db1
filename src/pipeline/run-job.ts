import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { Destination } from '../load/destination.js';
import type { Logger } from '../log/logger.js';
import { redact } from '../log/redact.js';
import { formatWindow } from '../plan/windows.js';
import { beginRun, finishRun } from '../state/runs.js';
import { readSchemaChanges } from '../state/schema-changes.js';
import { readUnlistedFields } from '../state/unlisted-fields.js';
import { DEFAULT_STOP_AFTER_NO_ANSWER } from '../plan/job-plan.js';
import { STREAM_ORDER, streamDefinition } from '../streams/registry.js';
import { UnansweredWindows } from './unanswered-windows.js';
import { logDirectory, logRunEnd, logStream } from './run-log.js';
import { CustomerTally } from './customer-tally.js';
import type { JobRunRequest, JobRunResult, RunUnderWay } from './job-run-request.js';
import { runLanes } from './lanes.js';
import { keepLease } from './lease-keeper.js';
import { recordWhileReconnecting } from './record-while-reconnecting.js';
import { refreshProfiles } from './refresh-profiles.js';
import { replaySpans } from './replay-spans.js';
import { RunStop } from './run-stop.js';
import { StagingBudget } from './staging-budget.js';
import { shareSourceRate, type SourceRateShare } from './source-rate-share.js';
import { directoryQueue, streamQueue } from './stream-queues.js';
import { RunInterruptedError, SourceGoneError } from './pipeline-errors.js';

/**
 * The order of one run, from the job's plan to its last commit:
 *
 *   record the start in `_etl_runs` ─► keep the lease, share the source's rate with the live runs ─► refresh the
 *   reference data ─► make the customer directory complete (accounts windows from `source.history_start`) ─►
 *   every stream in `STREAM_ORDER`: a queue of spans (stream-queues.ts), worked through by the stream's lanes
 *   (lanes.ts), each span claimed, loaded and committed on its own (load-span.ts) ─► the fields first seen ─►
 *   record how the run ended. A replay takes the same start, lease and end, its work the spans the raw archive
 *   kept (replay-spans.ts) instead of the source.
 *
 * Every span is claimed before it is extracted, so two workers never load the same window at once. A window that
 * fails is recorded and reported; the others go on. Each span commits on its own, so work done survives a later
 * failure.
 *
 * @throws JobBusyError when `exclusive` and another run of the job is alive (nothing was started).
 */
export async function runJob(request: JobRunRequest): Promise<JobRunResult> {
  const { plan, destination, logger } = request;
  const runId = request.runId ?? randomUUID();
  const backfill = request.work.kind === 'backfill' ? request.work.backfill : undefined;
  const result: JobRunResult = {
    runId,
    loaded: [],
    directory: { loaded: [], empty: 0 },
    empty: new Map(),
    failed: [],
    requests: 0,
    retries: 0,
    newFields: [],
    schemaChanges: [],
  };
  const stop = request.stop ?? new RunStop();
  const retriesBefore = request.api.http.retryCount ?? 0;
  // 1. the start, recorded (with the job's run lock when `exclusive`)
  await destination.ledgerTransaction((conn) =>
    beginRun(conn, destination.capabilities, {
      runId,
      job: plan.name,
      command: request.command,
      startedAt: new Date().toISOString(),
      host: hostname(),
      pid: process.pid,
      leaseSeconds: plan.leaseSeconds,
      backfillId: backfill?.backfillId,
      lock: request.exclusive ? `run:${plan.name}` : undefined,
    }),
  );
  // 2. the lease kept while the run lives; the run's requests called off when it stops
  const lease = keepLease(destination, runId, plan.leaseSeconds, logger);
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
  const run: RunUnderWay = {
    request,
    runId,
    job: plan.name,
    jobConfig: plan.job,
    result,
    stop,
    log,
    customers: new CustomerTally(request.onCustomersAsked),
    staging: destination.stagingBytes === undefined ? undefined : new StagingBudget(destination.stagingBytes),
    unanswered: new UnansweredWindows(plan.stopAfterNoAnswer ?? DEFAULT_STOP_AFTER_NO_ANSWER, (n, last) =>
      stop.stop(new SourceGoneError(plan.sourceUrl ?? 'the source', n, last)),
    ),
    lastReap: 0,
  };
  let unexpected: string | undefined;
  let rateShare: SourceRateShare | undefined;
  try {
    // a replay asks the archive, never the service: no share of its rate, no reference data asked of it
    if (request.work.kind === 'replay') {
      await replaySpans(run, request.work.replay);
      return result;
    }
    // the source's rate limit, shared with the live runs of the same warehouse
    rateShare = await shareSourceRate(destination, request.api.http, plan.requestsPerSecond, log);
    // 3. reference data, which is not windowed: a failure is reported but does not fail the windows
    if (request.refreshReferenceData !== false) await refreshReferenceData(run);
    // 4. the customer directory: the job's own windows, which do not count towards a backfill's progress
    const directory = await directoryQueue(run);
    if (directory) await runLanes(run, 'accounts', streamDefinition('accounts'), directory, { directory: true });
    if (result.directory.loaded.length > 0 || result.directory.empty > 0) logDirectory(run);
    // 5. every stream, in order, span by span
    for (const name of STREAM_ORDER) {
      if (stop.reason) break;
      const stream = streamDefinition(name);
      const queue = await streamQueue(run, name, stream);
      if (queue) await runLanes(run, name, stream, queue, { backfillId: backfill?.backfillId });
      if (queue || result.empty.has(name)) logStream(run, name);
    }
    if (stop.reason instanceof SourceGoneError) throw stop.reason.settled(result, request.work);
    if (stop.reason) throw stop.reason;
    // 6. the members the spec does not list that this run loaded first, and what it changed of what analysts read
    result.newFields = await destination.withConnection((conn) => readUnlistedFields(conn, runId));
    result.schemaChanges = (await destination.withConnection((conn) => readSchemaChanges(conn, { runId }))).changes;
  } catch (error) {
    unexpected = redact(error instanceof Error ? error.message : String(error));
    throw error;
  } finally {
    result.retries = (request.api.http.retryCount ?? 0) - retriesBefore;
    request.onWorkDone?.();
    lease.stop();
    rateShare?.stop();
    letGoOfApi();
    // 7. the end, recorded
    await recordEnd(destination, result, stop, unexpected, log);
  }
  return result;
}

/** Replaces `profiles` and `profile_fields`; a failure is logged, and the previous ones are kept. */
async function refreshReferenceData(run: RunUnderWay): Promise<void> {
  const { request, log } = run;
  const today = new Date().toISOString().slice(0, 10);
  await refreshProfiles(
    request.api,
    request.destination,
    run.job,
    run.runId,
    today,
    request.archive,
    request.plan.schemaContract,
  ).then(
    (n) =>
      n.unreadFields > 0
        ? log.warn(n, 'profiles refreshed; fields that could not be read are NULL, see _etl_field_rejects')
        : log.info(n, 'profiles refreshed'),
    (error) => {
      if (run.stop.absorbs(error)) return;
      log.warn({ err: error }, 'profiles could not be refreshed; the previous ones are kept');
      run.unanswered.failed(error);
    },
  );
}

/** What `_etl_runs.error` says of a run's failed windows (null: none failed). */
function runFailure(result: JobRunResult): string | null {
  const first = result.failed[0];
  return first
    ? `${result.failed.length} window(s) failed; first: ${first.stream} ${formatWindow(first.window)}: ${first.error}`
    : null;
}

/** What `_etl_runs.error` says of a replay's windows and kept webhook events not replayed (null: none). */
function replayFailure(result: JobRunResult): string | null {
  const first = result.failed[0];
  const events = result.replayed?.eventsFailed ?? [];
  return first
    ? `${result.failed.length} window(s) not replayed; first: ${first.stream} ${first.window.start}: ${first.error}`
    : events.length > 0
      ? `${events.length} webhook event(s) not replayed; first: ${events[0]}`
      : null;
}

/** Records how the run ended: `interrupted`, `failed` (with its first failure or what stopped it) or `succeeded`. */
async function recordEnd(
  destination: Destination,
  result: JobRunResult,
  stop: RunStop,
  unexpected: string | undefined,
  log: Logger,
): Promise<void> {
  const error = unexpected ?? (result.replayed ? replayFailure(result) : runFailure(result));
  const status = stop.reason instanceof RunInterruptedError ? 'interrupted' : error ? 'failed' : 'succeeded';
  await recordWhileReconnecting(() =>
    destination.ledgerTransaction((conn) =>
      finishRun(conn, {
        runId: result.runId,
        status,
        error,
        requests: result.requests,
        retries: result.retries,
        finishedAt: new Date().toISOString(),
      }),
    ),
  ).catch((e) => log.error({ err: e }, 'could not record the end of the run'));
  logRunEnd(log, status, error, result);
}
