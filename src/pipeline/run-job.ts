import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { PER_CUSTOMER_STREAMS, type JobConfig, type StreamName } from '../config/config-schema.js';
import type { ResolvedConfig } from '../config/load-config.js';
import type { Destination } from '../load/destination.js';
import type { Logger } from '../log/logger.js';
import { redact } from '../log/redact.js';
import { addDays, type Day } from '../plan/days.js';
import { planRange, windowStartOf } from '../plan/plan-windows.js';
import { formatWindow, groupWindows, type Window } from '../plan/windows.js';
import type { LoyaltyApi } from '../source/loyalty-api.js';
import type { Backfill } from '../state/backfills.js';
import { directoryCompleteThrough, windowsNotDone } from '../state/directory.js';
import { ClaimLostError, recordWindowFailed, type WindowCounts } from '../state/ledger.js';
import { beginRun, finishRun, reapAbandonedRuns } from '../state/runs.js';
import { STREAM_ORDER, streamDefinition } from '../streams/registry.js';
import type { StreamDefinition } from '../streams/stream.js';
import { skipEmptyStretches } from './empty-stretches.js';
import { keepLease } from './lease-keeper.js';
import { refreshProfiles } from './refresh-profiles.js';
import { loadSpan, SpanPartlyLoadedError } from './load-span.js';
import { RunInterruptedError, RunStop } from './run-stop.js';
import { shareSourceRate, type SourceRateShare } from './source-rate-share.js';
import { BackfillQueue, PlannedQueue, type WindowQueue } from './window-queue.js';

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
  /** Called after every span, for progress display. */
  onSpanDone?: (stream: StreamName, counts: WindowCounts[]) => void;
  /** Stops the run early (an interruption); the run also stops by itself when the source refuses the credentials. */
  stop?: RunStop;
}

/** Longest pause between two claims while the windows left are held by other workers. */
const MAX_WAIT_MS = 2000;

/**
 * The last day of the customer directory (the accounts windows from `source.history_start` on) a run must hold
 * before its streams load, or undefined when none of its streams needs it. A run loads its own accounts windows
 * from `first_day`; a backfill its range. Postings ask every customer known by the end of their span, so a
 * backfill of postings alone needs the directory through its last day.
 */
function directoryThrough(work: JobWork, job: JobConfig): Day | undefined {
  const streams: readonly string[] = work.kind === 'backfill' ? work.backfill.streams : [...work.windows.keys()];
  const perCustomer = streams.some((s) => (PER_CUSTOMER_STREAMS as readonly string[]).includes(s));
  if (!streams.includes('accounts') && !perCustomer) return undefined;
  if (work.kind === 'planned') return addDays(job.first_day, -1);
  if (streams.includes('accounts')) return addDays(work.backfill.from, -1);
  return addDays(work.backfill.to, job.window_days - 1);
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
  const jobConfig: JobConfig = config.jobs[request.job]!;
  const runId = request.runId ?? randomUUID();
  const leaseSeconds = request.leaseSeconds ?? config.leaseSeconds;
  const backfill = request.work.kind === 'backfill' ? request.work.backfill : undefined;
  const result: JobRunResult = { runId, loaded: [], directory: { loaded: [], empty: 0 }, failed: [], requests: 0 };
  const stop = request.stop ?? new RunStop();
  const me = { host: hostname(), pid: process.pid };
  await destination.ledgerTransaction((conn) =>
    beginRun(conn, destination.capabilities, {
      runId,
      job: request.job,
      command: request.command,
      startedAt: new Date().toISOString(),
      ...me,
      leaseSeconds,
      backfillId: backfill?.backfillId,
      lock: request.exclusive ? `run:${request.job}` : undefined,
    }),
  );
  const lease = keepLease(destination, runId, leaseSeconds, logger);
  const letGoOfApi = stop.callsOff(request.api);
  const log = logger.child({ job: request.job, runId });
  log.info(
    { command: request.command, destination: destination.describe(), ...(backfill ? { backfillId: backfill.backfillId, joined: !backfill.created } : {}) },
    'run started',
  );

  let lastReap = 0;
  /** Waiting on windows held by others: notice a dead holder on this host early instead of after its lease. */
  async function reapNow(): Promise<void> {
    if (!destination.capabilities.multiProcess || Date.now() - lastReap < MAX_WAIT_MS) return;
    lastReap = Date.now();
    await destination.ledgerTransaction((conn) => reapAbandonedRuns(conn, destination.capabilities, { ...me, now: new Date().toISOString() }));
  }

  /** Spans of `stream` this worker loads at once. */
  const lanesOf = (stream: StreamDefinition) => stream.lanes(Math.max(1, request.concurrency));
  const spanDays = (stream: StreamDefinition) => stream.maxWindowsPerSpan(jobConfig) * jobConfig.window_days;
  const gridStart = windowStartOf(jobConfig, config.source.history_start);

  /**
   * The accounts windows of the customer directory through `through` that are not done yet, after recording the
   * stretches the source reports empty: a new job sweeps the program's whole history once, later runs nothing.
   */
  async function directoryQueue(through: Day): Promise<WindowQueue | undefined> {
    const accounts = streamDefinition('accounts');
    const all = planRange(jobConfig, config.source.history_start, through);
    const missing = await destination.withConnection((conn) => windowsNotDone(conn, request.job, 'accounts', all));
    if (missing.length === 0) return undefined;
    const api = request.api.scoped();
    const letGo = stop.callsOff(api);
    const stretches = await skipEmptyStretches({
      job: request.job,
      stream: 'accounts',
      runId,
      firstDay: jobConfig.first_day,
      windows: missing,
      count: (range) => accounts.countRange!(api, range),
      destination,
    }).finally(() => {
      letGo();
      result.requests += api.counter.requests;
    });
    result.directory.empty += stretches.empty;
    log.info(
      { stream: 'accounts', through, windows: missing.length, empty: stretches.empty, toLoad: stretches.toLoad.length, requests: stretches.requests },
      'customer directory: loading the accounts windows not done yet',
    );
    if (stretches.toLoad.length === 0) return undefined;
    return new PlannedQueue({ job: request.job, stream: 'accounts', runId, destination }, groupWindows(stretches.toLoad, spanDays(accounts)), {
      skipDone: true,
    });
  }

  /**
   * A per-customer stream asks every customer known by the end of each window: windows past the day through which
   * the directory is complete fail without a request, since the customers to ask are not known.
   */
  async function knownCustomersThrough(): Promise<Day> {
    return destination.withConnection((conn) => directoryCompleteThrough(conn, request.job, gridStart));
  }
  const unknownCustomers = (through: Day) =>
    `accounts of ${addDays(through, 1)} and later are not loaded for job ${request.job}, so the customers to ask are not known`;

  async function queueOf(name: StreamName, stream: StreamDefinition): Promise<WindowQueue | undefined> {
    const ctx = { job: request.job, stream: name, runId, destination };
    const perSpan = stream.maxWindowsPerSpan(jobConfig);
    const perCustomer = PER_CUSTOMER_STREAMS.includes(name);
    if (request.work.kind === 'backfill') {
      if (!request.work.backfill.streams.includes(name)) return undefined;
      const known = perCustomer ? await knownCustomersThrough() : undefined;
      const limits = { maxDays: spanDays(stream), maxWindows: perSpan, spans: lanesOf(stream) };
      return BackfillQueue.open(ctx, request.work.backfill, limits, known === undefined ? undefined : { after: known, error: unknownCustomers(known) });
    }
    let windows = request.work.windows.get(name);
    if (!windows || windows.length === 0) return undefined;
    if (perCustomer) {
      const known = await knownCustomersThrough();
      for (const window of windows.filter((w) => w.end > known)) result.failed.push({ stream: name, window, error: unknownCustomers(known) });
      windows = windows.filter((w) => w.end <= known);
    }
    return new PlannedQueue(ctx, groupWindows(windows, spanDays(stream)));
  }

  /** Where a span's windows count: the backfill they are loaded for, or the customer directory (neither progress nor `loaded`). */
  type SpanTarget = { backfillId?: string; directory?: boolean };

  async function loadClaimed(name: StreamName, stream: StreamDefinition, span: Window[], target: SpanTarget): Promise<void> {
    const done = (counts: WindowCounts[]) => {
      if (target.directory) return void result.directory.loaded.push(...counts);
      result.loaded.push(...counts.map((c) => ({ ...c, stream: name })));
      request.onSpanDone?.(name, counts);
    };
    const api = request.api.scoped();
    const letGo = stop.callsOff(api);
    const ctx = {
      api,
      pageSize: config.source.page_size,
      concurrency: config.source.concurrency,
      timezone: config.source.timezone,
      job: request.job,
      jobConfig,
      logger: log,
    };
    const customers = PER_CUSTOMER_STREAMS.includes(name) ? jobConfig.postings.customers : undefined;
    const settings = {
      job: request.job,
      runId,
      firstDay: jobConfig.first_day,
      rejectThreshold: jobConfig.reject_threshold,
      claimedBy: runId,
      backfillId: target.backfillId,
      customers,
    };
    try {
      done(await loadSpan(stream, span, ctx, destination, settings, log));
    } catch (caught) {
      let error = caught;
      let failed = span;
      if (caught instanceof SpanPartlyLoadedError) {
        // the windows read before the failure were committed: they count as loaded
        done(caught.loaded);
        error = caught.cause;
        failed = caught.failed;
      }
      // the run stops: the span's windows are left as they were, for the next run
      if (stop.absorbs(error)) return;
      const message = redact(error instanceof Error ? error.message : String(error));
      log.error({ stream: name, window: formatWindow({ start: failed[0]!.start, end: failed.at(-1)!.end }), err: error }, 'window failed');
      for (const window of failed) {
        result.failed.push({ stream: name, window, error: message });
        // a window taken over by another worker is that worker's to record
        if (error instanceof ClaimLostError) continue;
        await destination
          .withConnection((conn) => recordWindowFailed(conn, request.job, name, window, runId, new Date().toISOString(), message))
          .catch((e: unknown) => {
            // The window stays claimed by this live run, so its queue would wait for it for ever: the run stops
            // instead (its claims fall free when it is recorded as ended, or when its lease runs out).
            log.error({ err: e }, 'could not record the failed window');
            throw e;
          });
      }
    } finally {
      letGo();
      result.requests += api.counter.requests;
    }
  }

  /** Works through a queue with the stream's lanes; throws the first warehouse error a lane hit, once all have ended. */
  async function drain(name: StreamName, stream: StreamDefinition, queue: WindowQueue, target: SpanTarget): Promise<void> {
    result.failed.push(...queue.skipped.map((s) => ({ stream: name, ...s })));
    let waitLogged = false;
    // once a lane breaks, the others finish the span in hand and stop: none waits for windows it will never get
    let laneBroken = false;
    const work = async () => {
      for (let waits = 0; !laneBroken && !stop.reason; ) {
        const next = await queue.next();
        if (next === undefined) return;
        if (next === 'wait') {
          if (!waitLogged) {
            waitLogged = true;
            log.info({ stream: name }, 'the windows left are held by other workers; waiting for them to finish, or to die and free them');
          }
          await sleep(Math.min(MAX_WAIT_MS, 100 * 2 ** Math.min(waits++, 5)));
          await reapNow();
          continue;
        }
        waits = 0;
        await loadClaimed(name, stream, next, target);
      }
    };
    const lane = () =>
      work().catch((error: unknown) => {
        laneBroken = true;
        throw error;
      });
    // every lane ends before the run does, even when one of them hits a warehouse error
    const lanes = await Promise.allSettled(Array.from({ length: lanesOf(stream) }, lane));
    const broken = lanes.find((l) => l.status === 'rejected');
    if (broken) throw broken.reason;
  }

  let unexpected: string | undefined;
  let rateShare: SourceRateShare | undefined;
  try {
    rateShare = await shareSourceRate(destination, request.api.http, config.source.requests_per_second, log);
    if (request.refreshReferenceData !== false) {
      // Reference data is not windowed: a failure is reported but does not fail the windows.
      await refreshProfiles(request.api, destination, request.job, runId, new Date().toISOString().slice(0, 10)).then(
        (n) => log.info(n, 'profiles refreshed'),
        (error) => stop.absorbs(error) || log.warn({ err: error }, 'profiles could not be refreshed; the previous ones are kept'),
      );
    }
    const through = directoryThrough(request.work, jobConfig);
    const directory = through === undefined ? undefined : await directoryQueue(through);
    // the directory's windows are the job's own, not the backfill's: they do not count towards its progress
    if (directory) await drain('accounts', streamDefinition('accounts'), directory, { directory: true });
    for (const name of STREAM_ORDER) {
      if (stop.reason) break;
      const stream = streamDefinition(name);
      const queue = await queueOf(name, stream);
      if (queue) await drain(name, stream, queue, { backfillId: backfill?.backfillId });
    }
    if (stop.reason) throw stop.reason;
  } catch (error) {
    unexpected = redact(error instanceof Error ? error.message : String(error));
    throw error;
  } finally {
    lease.stop();
    rateShare?.stop();
    letGoOfApi();
    const first = result.failed[0];
    const error =
      unexpected ?? (first ? `${result.failed.length} window(s) failed; first: ${first.stream} ${formatWindow(first.window)}: ${first.error}` : null);
    await destination
      .ledgerTransaction((conn) =>
        finishRun(conn, {
          runId,
          status: stop.reason instanceof RunInterruptedError ? 'interrupted' : error ? 'failed' : 'succeeded',
          error,
          requests: result.requests,
          finishedAt: new Date().toISOString(),
        }),
      )
      .catch((e) => log.error({ err: e }, 'could not record the end of the run'));
    log.info({ windowsLoaded: result.loaded.length, windowsFailed: result.failed.length, requests: result.requests }, 'run finished');
  }
  return result;
}
