import { PER_CUSTOMER_STREAMS, type JobSettings, type StreamName } from '../plan/job-plan.js';
import { addDays, type Day } from '../plan/days.js';
import { planRange, windowStartOf } from '../plan/plan-windows.js';
import { groupWindows, type Window } from '../plan/windows.js';
import { directoryCompleteThrough, firstListedDay, windowsNotDone } from '../state/directory.js';
import { streamDefinition } from '../streams/registry.js';
import type { StreamDefinition } from '../streams/stream.js';
import { skipEmptyStretches } from './empty-stretches.js';
import type { JobWork, RunUnderWay } from './job-run-request.js';
import { lanesOf } from './lanes.js';
import { BackfillQueue, PlannedQueue, type WindowQueue } from './window-queue.js';

/**
 * The accounts windows of the customer directory (from `source.history_start` on) the run's streams need and
 * that are not done yet, after recording the stretches the source reports empty: a new job sweeps the program's
 * whole history once, later runs nothing. Undefined when there is nothing to load.
 */
export async function directoryQueue(run: RunUnderWay): Promise<WindowQueue | undefined> {
  const { request, job, jobConfig, runId } = run;
  const through = directoryThrough(request.work, jobConfig);
  if (through === undefined) return undefined;
  const accounts = streamDefinition('accounts');
  const all = planRange(jobConfig, request.plan.historyStart, through);
  const counted = await recordEmptyStretches(run, 'accounts', accounts, all, 'fail');
  if (!counted) return undefined;
  run.result.directory.empty += counted.empty.length;
  run.result.directory.from = request.plan.historyStart;
  run.result.directory.through = through;
  run.log.info(
    {
      stream: 'accounts',
      through,
      windows: counted.missing.length,
      empty: counted.empty.length,
      toLoad: counted.toLoad.length,
      requests: counted.requests,
    },
    'customer directory: loading the accounts windows not done yet',
  );
  if (counted.toLoad.length === 0) return undefined;
  const spans = groupWindows(counted.toLoad, spanDays(run, accounts));
  return new PlannedQueue({ job, stream: 'accounts', runId, destination: request.destination }, spans, {
    skipDone: true,
  });
}

/**
 * The last day of the customer directory a run must hold before its streams load, or undefined when none of its
 * streams needs it. A run loads its own accounts windows from `first_day`; a backfill its range. Postings ask
 * every customer known by the end of their span, so a backfill of postings alone needs the directory through its
 * last day.
 */
function directoryThrough(work: JobWork, job: JobSettings): Day | undefined {
  if (work.kind === 'replay') return undefined;
  const streams: readonly string[] = work.kind === 'backfill' ? work.backfill.streams : [...work.windows.keys()];
  const perCustomer = streams.some((s) => (PER_CUSTOMER_STREAMS as readonly string[]).includes(s));
  if (!streams.includes('accounts') && !perCustomer) return undefined;
  if (work.kind === 'planned') return addDays(job.first_day, -1);
  if (streams.includes('accounts')) return addDays(work.backfill.from, -1);
  return addDays(work.backfill.to, job.window_days - 1);
}

/**
 * The queue of a stream's windows, or undefined when the run loads none of them. A per-customer stream asks every
 * customer known by the end of each window: windows past the day through which the directory is complete fail
 * without a request, since the customers to ask are not known.
 */
export async function streamQueue(
  run: RunUnderWay,
  name: StreamName,
  stream: StreamDefinition,
): Promise<WindowQueue | undefined> {
  const { request, job, jobConfig, runId } = run;
  const { work } = request;
  const planned = work.kind === 'planned' ? work.windows.get(name) : undefined;
  if (work.kind === 'backfill' ? !work.backfill.streams.includes(name) : !planned?.length) return undefined;
  const unknown = PER_CUSTOMER_STREAMS.includes(name) ? await unknownCustomers(run) : undefined;
  const ctx = { job, stream: name, runId, destination: request.destination };
  if (work.kind === 'backfill') {
    const limits = {
      maxDays: spanDays(run, stream),
      maxWindows: stream.maxWindowsPerSpan(jobConfig),
      spans: lanesOf(run, stream),
    };
    return BackfillQueue.open(ctx, work.backfill, limits, unknown);
  }
  let windows = await withoutEmptyStretches(run, name, stream, planned!);
  if (unknown) {
    for (const window of windows.filter((w) => w.end > unknown.after))
      run.result.failed.push({ stream: name, window, error: unknown.error });
    windows = windows.filter((w) => w.end <= unknown.after);
  }
  const spans = unknown ? await customerSpans(run, windows, stream) : groupWindows(windows, spanDays(run, stream));
  return new PlannedQueue(ctx, spans);
}

/**
 * Spans of a per-customer stream: the windows before any customer was listed form spans of their own (they ask
 * nobody the export listed), so the spans that ask customers start where the first of them appears. A first run
 * from an early `first_day` then asks each customer once per span of the program's real history, not once more
 * for a span that merely reaches into it.
 */
async function customerSpans(run: RunUnderWay, windows: Window[], stream: StreamDefinition): Promise<Window[][]> {
  const first = await run.request.destination.withConnection((conn) => firstListedDay(conn));
  const maxDays = spanDays(run, stream);
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
 * The planned windows of a stream less the never-loaded stretches the source reports empty, recorded done.
 * Windows loaded before (the look-back) are read again as planned; a stream whose listing cannot be counted by
 * range keeps them all.
 */
async function withoutEmptyStretches(
  run: RunUnderWay,
  name: StreamName,
  stream: StreamDefinition,
  windows: Window[],
): Promise<Window[]> {
  if (!stream.countRange) return windows;
  const counted = await recordEmptyStretches(run, name, stream, windows, 'read-each');
  if (!counted || counted.empty.length === 0) return windows;
  const { empty } = counted;
  run.result.empty.set(name, (run.result.empty.get(name) ?? 0) + empty.length);
  run.request.onSpanDone?.(
    name,
    empty.map((window) => ({ window, extracted: 0, loaded: 0, rejected: 0, requests: 0 })),
  );
  run.log.info(
    { stream: name, windows: windows.length, empty: empty.length, requests: counted.requests },
    'windows the source reports empty recorded done',
  );
  const emptyStarts = new Set(empty.map((w) => w.start));
  return windows.filter((w) => !emptyStarts.has(w.start));
}

/** What {@link recordEmptyStretches} found: the windows not done yet, of which `empty` were recorded done. */
interface CountedStretches {
  missing: Window[];
  /** Windows recorded done with no records. */
  empty: Window[];
  /** Windows still to be read one by one. */
  toLoad: Window[];
  /** Counting requests made. */
  requests: number;
}

/**
 * Records done the stretches of `windows` never loaded that the source reports empty ({@link skipEmptyStretches}:
 * a few counting requests instead of one request per window, for a new job that starts years back), or undefined
 * when every window is done. When counting fails, `'fail'` throws; `'read-each'` gives undefined, so every window
 * is read (a window recorded empty before the failure is read again, harmlessly), and a run being stopped stops
 * there.
 */
async function recordEmptyStretches(
  run: RunUnderWay,
  name: StreamName,
  stream: StreamDefinition,
  windows: Window[],
  ifCountingFails: 'fail' | 'read-each',
): Promise<CountedStretches | undefined> {
  const { request, job, runId } = run;
  const missing = await request.destination.withConnection((conn) => windowsNotDone(conn, job, name, windows));
  if (missing.length === 0) return undefined;
  const api = request.api.scoped();
  const letGo = run.stop.callsOff(api);
  const stretches = await skipEmptyStretches({
    job,
    stream: name,
    runId,
    firstDay: run.jobConfig.first_day,
    windows: missing,
    count: (range) => stream.countRange!(api, range),
    destination: request.destination,
  })
    .catch((error: unknown) => {
      if (ifCountingFails === 'fail') throw error;
      if (!run.stop.absorbs(error)) {
        run.log.warn({ stream: name, err: error }, 'could not count the windows never loaded; reading each of them');
        run.unanswered.failed(error);
      }
      return undefined;
    })
    .finally(() => {
      letGo();
      run.result.requests += api.counter.requests;
    });
  if (!stretches) return undefined;
  const toLoadStarts = new Set(stretches.toLoad.map((w) => w.start));
  const empty = missing.filter((w) => !toLoadStarts.has(w.start));
  return { missing, empty, toLoad: stretches.toLoad, requests: stretches.requests };
}

/** The days one span of `stream` holds at most. */
function spanDays(run: RunUnderWay, stream: StreamDefinition): number {
  return stream.maxWindowsPerSpan(run.jobConfig) * run.jobConfig.window_days;
}

/** The day through which the customer directory is complete, and why windows after it cannot load. */
async function unknownCustomers(run: RunUnderWay): Promise<{ after: Day; error: string }> {
  const { request, job } = run;
  const gridStart = windowStartOf(run.jobConfig, request.plan.historyStart);
  const after = await request.destination.withConnection((conn) => directoryCompleteThrough(conn, job, gridStart));
  return {
    after,
    error: `accounts of ${addDays(after, 1)} and later are not loaded for job ${job}, so the customers to ask are not known`,
  };
}
