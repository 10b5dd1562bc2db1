import { hostname } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { PER_CUSTOMER_STREAMS, type JobSettings, type StreamName } from '../plan/job-plan.js';
import type { Logger } from '../log/logger.js';
import { redact } from '../log/redact.js';
import { addDays, type Day } from '../plan/days.js';
import { planRange, windowStartOf } from '../plan/plan-windows.js';
import { formatWindow, groupWindows, type Window } from '../plan/windows.js';
import { directoryCompleteThrough, firstListedDay, windowsNotDone } from '../state/directory.js';
import { ClaimLostError, recordWindowFailed, type WindowCounts } from '../state/ledger.js';
import { reapAbandonedRuns } from '../state/runs.js';
import { STREAM_ORDER, streamDefinition } from '../streams/registry.js';
import type { StreamContext, StreamDefinition } from '../streams/stream.js';
import { CustomerTally } from './customer-tally.js';
import { skipEmptyStretches } from './empty-stretches.js';
import { loadSpan, SpanPartlyLoadedError, type SpanSettings } from './load-span.js';
import { refreshProfiles } from './refresh-profiles.js';
import type { JobRunRequest, JobRunResult, JobWork } from './job-run-request.js';
import type { RunStop } from './run-stop.js';
import { BackfillQueue, PlannedQueue, type WindowQueue } from './window-queue.js';

/** Longest pause between two claims while the windows left are held by other workers. */
const MAX_WAIT_MS = 2000;

/** Where a span's windows count: the backfill they are loaded for, or the customer directory (neither progress nor `loaded`). */
type SpanTarget = { backfillId?: string; directory?: boolean };

/**
 * The last day of the customer directory (the accounts windows from `source.history_start` on) a run must hold
 * before its streams load, or undefined when none of its streams needs it. A run loads its own accounts windows
 * from `first_day`; a backfill its range. Postings ask every customer known by the end of their span, so a
 * backfill of postings alone needs the directory through its last day.
 */
function directoryThrough(work: JobWork, job: JobSettings): Day | undefined {
  const streams: readonly string[] = work.kind === 'backfill' ? work.backfill.streams : [...work.windows.keys()];
  const perCustomer = streams.some((s) => (PER_CUSTOMER_STREAMS as readonly string[]).includes(s));
  if (!streams.includes('accounts') && !perCustomer) return undefined;
  if (work.kind === 'planned') return addDays(job.first_day, -1);
  if (streams.includes('accounts')) return addDays(work.backfill.from, -1);
  return addDays(work.backfill.to, job.window_days - 1);
}

/**
 * One run's work, once `runJob` has recorded its start: reference data, then the customer directory, then every
 * stream in {@link STREAM_ORDER}, each span claimed, loaded and committed on its own. A window that fails is
 * recorded and reported; the others go on.
 */
export class JobRun {
  private readonly jobConfig: JobSettings;
  private readonly job: string;
  private readonly me = { host: hostname(), pid: process.pid };
  private lastReap = 0;
  private readonly customers: CustomerTally;

  constructor(
    private readonly request: JobRunRequest,
    readonly runId: string,
    readonly result: JobRunResult,
    private readonly stop: RunStop,
    private readonly log: Logger,
  ) {
    this.jobConfig = request.plan.job;
    this.job = request.plan.name;
    this.customers = new CustomerTally(request.onCustomersAsked);
  }

  /** Loads everything the run asks for; throws what stopped it (a warehouse error, an interruption). */
  async load(): Promise<void> {
    const { request, stop } = this;
    if (request.refreshReferenceData !== false) {
      // Reference data is not windowed: a failure is reported but does not fail the windows.
      await refreshProfiles(
        request.api,
        request.destination,
        this.job,
        this.runId,
        new Date().toISOString().slice(0, 10),
        request.archive,
      ).then(
        (n) => this.log.info(n, 'profiles refreshed'),
        (error) =>
          stop.absorbs(error) ||
          this.log.warn({ err: error }, 'profiles could not be refreshed; the previous ones are kept'),
      );
    }
    const through = directoryThrough(request.work, this.jobConfig);
    const directory = through === undefined ? undefined : await this.directoryQueue(through);
    // the directory's windows are the job's own, not the backfill's: they do not count towards its progress
    if (directory) await this.drain('accounts', streamDefinition('accounts'), directory, { directory: true });
    const backfillId = request.work.kind === 'backfill' ? request.work.backfill.backfillId : undefined;
    for (const name of STREAM_ORDER) {
      if (stop.reason) break;
      const stream = streamDefinition(name);
      const queue = await this.queueOf(name, stream);
      if (queue) await this.drain(name, stream, queue, { backfillId });
    }
    if (stop.reason) throw stop.reason;
  }

  /**
   * The accounts windows of the customer directory through `through` that are not done yet, after recording the
   * stretches the source reports empty: a new job sweeps the program's whole history once, later runs nothing.
   */
  private async directoryQueue(through: Day): Promise<WindowQueue | undefined> {
    const { request, jobConfig, runId } = this;
    const accounts = streamDefinition('accounts');
    const all = planRange(jobConfig, request.plan.historyStart, through);
    const missing = await request.destination.withConnection((conn) => windowsNotDone(conn, this.job, 'accounts', all));
    if (missing.length === 0) return undefined;
    const api = request.api.scoped();
    const letGo = this.stop.callsOff(api);
    const count = (range: Window) => accounts.countRange!(api, range);
    const stretches = await skipEmptyStretches({
      job: this.job,
      stream: 'accounts',
      runId,
      firstDay: jobConfig.first_day,
      windows: missing,
      count,
      destination: request.destination,
    }).finally(() => {
      letGo();
      this.result.requests += api.counter.requests;
    });
    this.result.directory.empty += stretches.empty;
    this.log.info(
      {
        stream: 'accounts',
        through,
        windows: missing.length,
        empty: stretches.empty,
        toLoad: stretches.toLoad.length,
        requests: stretches.requests,
      },
      'customer directory: loading the accounts windows not done yet',
    );
    if (stretches.toLoad.length === 0) return undefined;
    const spans = groupWindows(stretches.toLoad, this.spanDays(accounts));
    return new PlannedQueue({ job: this.job, stream: 'accounts', runId, destination: request.destination }, spans, {
      skipDone: true,
    });
  }

  /**
   * The queue of a stream's windows. A per-customer stream asks every customer known by the end of each window:
   * windows past the day through which the directory is complete fail without a request, since the customers to
   * ask are not known.
   */
  private async queueOf(name: StreamName, stream: StreamDefinition): Promise<WindowQueue | undefined> {
    const { request, jobConfig } = this;
    const { work } = request;
    const planned = work.kind === 'planned' ? work.windows.get(name) : undefined;
    if (work.kind === 'backfill' ? !work.backfill.streams.includes(name) : !planned?.length) return undefined;
    const unknown = PER_CUSTOMER_STREAMS.includes(name) ? await this.unknownCustomers() : undefined;
    const ctx = { job: this.job, stream: name, runId: this.runId, destination: request.destination };
    if (work.kind === 'backfill') {
      const limits = {
        maxDays: this.spanDays(stream),
        maxWindows: stream.maxWindowsPerSpan(jobConfig),
        spans: this.lanesOf(stream),
      };
      return BackfillQueue.open(ctx, work.backfill, limits, unknown);
    }
    let windows = await this.withoutEmptyStretches(name, stream, planned!);
    if (unknown) {
      for (const window of windows.filter((w) => w.end > unknown.after))
        this.result.failed.push({ stream: name, window, error: unknown.error });
      windows = windows.filter((w) => w.end <= unknown.after);
    }
    const spans = unknown ? await this.customerSpans(windows, stream) : groupWindows(windows, this.spanDays(stream));
    return new PlannedQueue(ctx, spans);
  }

  /**
   * Spans of a per-customer stream: the windows before any customer was listed form spans of their own (they ask
   * nobody the export listed), so the spans that ask customers start where the first of them appears. A first run
   * from an early `first_day` then asks each customer once per span of the program's real history, not once more
   * for a span that merely reaches into it.
   */
  private async customerSpans(windows: Window[], stream: StreamDefinition): Promise<Window[][]> {
    const first = await this.request.destination.withConnection((conn) => firstListedDay(conn));
    const maxDays = this.spanDays(stream);
    if (first === undefined) return groupWindows(windows, maxDays);
    return [
      ...groupWindows(
        windows.filter((w) => w.end < first),
        maxDays,
      ),
      ...groupWindows(
        windows.filter((w) => w.end >= first),
        maxDays,
      ),
    ];
  }

  /**
   * The planned windows of a stream less the never-loaded stretches the source reports empty, which are recorded
   * done with a few counting requests instead of one request per window (a first run from an early `first_day`).
   * Windows loaded before (the look-back) are read again as planned; a stream whose listing cannot be counted
   * by range keeps them all.
   */
  private async withoutEmptyStretches(
    name: StreamName,
    stream: StreamDefinition,
    windows: Window[],
  ): Promise<Window[]> {
    const { request, runId } = this;
    if (!stream.countRange) return windows;
    const missing = await request.destination.withConnection((conn) => windowsNotDone(conn, this.job, name, windows));
    if (missing.length === 0) return windows;
    const api = request.api.scoped();
    const letGo = this.stop.callsOff(api);
    const stretches = await skipEmptyStretches({
      job: this.job,
      stream: name,
      runId,
      firstDay: this.jobConfig.first_day,
      windows: missing,
      count: (range) => stream.countRange!(api, range),
      destination: request.destination,
    })
      .catch((error: unknown) => {
        // counting only saves requests: when the source cannot count, every window is read as planned (a window
        // recorded empty before the failure is read again, harmlessly), and a run being stopped stops there
        if (!this.stop.absorbs(error))
          this.log.warn({ stream: name, err: error }, 'could not count the windows never loaded; reading each of them');
        return undefined;
      })
      .finally(() => {
        letGo();
        this.result.requests += api.counter.requests;
      });
    if (!stretches || stretches.empty === 0) return windows;
    this.result.empty.set(name, (this.result.empty.get(name) ?? 0) + stretches.empty);
    const toLoadStarts = new Set(stretches.toLoad.map((w) => w.start));
    const empty = missing.filter((w) => !toLoadStarts.has(w.start));
    request.onSpanDone?.(
      name,
      empty.map((window) => ({ window, extracted: 0, loaded: 0, rejected: 0, requests: 0 })),
    );
    this.log.info(
      { stream: name, windows: windows.length, empty: stretches.empty, requests: stretches.requests },
      'windows the source reports empty recorded done',
    );
    const emptyStarts = new Set(empty.map((w) => w.start));
    return windows.filter((w) => !emptyStarts.has(w.start));
  }

  /** The day through which the customer directory is complete, and why windows after it cannot load. */
  private async unknownCustomers(): Promise<{ after: Day; error: string }> {
    const { request } = this;
    const gridStart = windowStartOf(this.jobConfig, request.plan.historyStart);
    const after = await request.destination.withConnection((conn) =>
      directoryCompleteThrough(conn, this.job, gridStart),
    );
    return {
      after,
      error: `accounts of ${addDays(after, 1)} and later are not loaded for job ${this.job}, so the customers to ask are not known`,
    };
  }

  /** Works through a queue with the stream's lanes; throws the first warehouse error a lane hit, once all have ended. */
  private async drain(
    name: StreamName,
    stream: StreamDefinition,
    queue: WindowQueue,
    target: SpanTarget,
  ): Promise<void> {
    this.result.failed.push(...queue.skipped.map((s) => ({ stream: name, ...s })));
    const waiting = { logged: false };
    // once a lane breaks, the others finish the span in hand and stop: none waits for windows it will never get
    let laneBroken = false;
    const lane = () =>
      this.lane(name, stream, queue, target, waiting, () => laneBroken).catch((error: unknown) => {
        laneBroken = true;
        throw error;
      });
    // every lane ends before the run does, even when one of them hits a warehouse error
    const lanes = await Promise.allSettled(Array.from({ length: this.lanesOf(stream) }, lane));
    const broken = lanes.find((l) => l.status === 'rejected');
    if (broken) throw broken.reason;
  }

  /** One lane: claims the next span and loads it, until the queue is done, the run stops or another lane broke. */
  private async lane(
    name: StreamName,
    stream: StreamDefinition,
    queue: WindowQueue,
    target: SpanTarget,
    waiting: { logged: boolean },
    broken: () => boolean,
  ): Promise<void> {
    for (let waits = 0; !broken() && !this.stop.reason;) {
      const next = await queue.next();
      if (next === undefined) return;
      if (next !== 'wait') {
        waits = 0;
        await this.loadClaimed(name, stream, next, target);
        continue;
      }
      if (!waiting.logged) {
        waiting.logged = true;
        this.log.info(
          { stream: name },
          'the windows left are held by other workers; waiting for them to finish, or to die and free them',
        );
      }
      await sleep(Math.min(MAX_WAIT_MS, 100 * 2 ** Math.min(waits++, 5)));
      await this.reapNow();
    }
  }

  /** Loads a span this run holds; a failure is recorded on its windows, and the run goes on. */
  private async loadClaimed(
    name: StreamName,
    stream: StreamDefinition,
    span: Window[],
    target: SpanTarget,
  ): Promise<void> {
    const { request, jobConfig, runId } = this;
    const done = (counts: WindowCounts[]) => {
      if (target.directory) return void this.result.directory.loaded.push(...counts);
      this.result.loaded.push(...counts.map((c) => ({ ...c, stream: name })));
      request.onSpanDone?.(name, counts);
    };
    const api = request.api.scoped();
    const letGo = this.stop.callsOff(api);
    const { plan } = request;
    const ctx: StreamContext = {
      api,
      pageSize: plan.pageSize,
      concurrency: plan.sourceConcurrency,
      timezone: plan.timezone,
      job: this.job,
      jobConfig,
      logger: this.log,
    };
    const customers = stream.customerRule?.(jobConfig);
    // only a span that asks customers, and only when someone follows the run's progress
    const asked = customers && request.onCustomersAsked ? this.customers.open(name) : undefined;
    const settings: SpanSettings = {
      job: this.job,
      runId,
      firstDay: jobConfig.first_day,
      rejectThreshold: jobConfig.reject_threshold,
      claimedBy: runId,
      backfillId: target.backfillId,
      customers,
      customersAsked: asked?.report,
      archive: request.archive,
    };
    try {
      done(await loadSpan(stream, span, ctx, request.destination, settings, this.log));
    } catch (caught) {
      // the windows read before the failure were committed: they count as loaded
      if (caught instanceof SpanPartlyLoadedError) done(caught.loaded);
      const [error, failed] = caught instanceof SpanPartlyLoadedError ? [caught.cause, caught.failed] : [caught, span];
      // the run stops: the span's windows are left as they were, for the next run
      if (!this.stop.absorbs(error)) await this.recordFailure(name, failed, error);
    } finally {
      asked?.close();
      letGo();
      this.result.requests += api.counter.requests;
    }
  }

  private async recordFailure(name: StreamName, windows: Window[], error: unknown): Promise<void> {
    const message = redact(error instanceof Error ? error.message : String(error));
    this.log.error(
      { stream: name, window: formatWindow({ start: windows[0]!.start, end: windows.at(-1)!.end }), err: error },
      'window failed',
    );
    for (const window of windows) {
      this.result.failed.push({ stream: name, window, error: message });
      // a window taken over by another worker is that worker's to record
      if (error instanceof ClaimLostError) continue;
      await this.request.destination
        .withConnection((conn) =>
          recordWindowFailed(conn, this.job, name, window, this.runId, new Date().toISOString(), message),
        )
        .catch((e: unknown) => {
          // The window stays claimed by this live run, so its queue would wait for it for ever: the run stops
          // instead (its claims fall free when it is recorded as ended, or when its lease runs out).
          this.log.error({ err: e }, 'could not record the failed window');
          throw e;
        });
    }
  }

  /** Waiting on windows held by others: notice a dead holder on this host early instead of after its lease. */
  private async reapNow(): Promise<void> {
    const { destination } = this.request;
    if (!destination.capabilities.multiProcess || Date.now() - this.lastReap < MAX_WAIT_MS) return;
    this.lastReap = Date.now();
    await destination.ledgerTransaction((conn) =>
      reapAbandonedRuns(conn, destination.capabilities, { ...this.me, now: new Date().toISOString() }),
    );
  }

  /** Spans of `stream` this worker loads at once. */
  private lanesOf(stream: StreamDefinition): number {
    return stream.lanes(Math.max(1, this.request.concurrency));
  }

  private spanDays(stream: StreamDefinition): number {
    return stream.maxWindowsPerSpan(this.jobConfig) * this.jobConfig.window_days;
  }
}
