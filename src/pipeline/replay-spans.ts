import { redact } from '../log/redact.js';
import type { Day } from '../plan/days.js';
import type { JobPlan, StreamName } from '../plan/job-plan.js';
import type { Window } from '../plan/windows.js';
import { readSpan, readSpanSummary, type ArchivedSpanFile } from '../source/archive/answer-archive.js';
import { ArchivedSource } from '../source/archive/archived-source.js';
import type { CustomerIdentity, SourceConventions } from '../source/loyalty-api.js';
import { LoyaltyApi } from '../source/loyalty-api.js';
import { windowsDoneBy } from '../state/replay-windows.js';
import { STREAM_ORDER, streamDefinition } from '../streams/registry.js';
import type { StreamContext } from '../streams/stream.js';
import type { ArchiveReplay, RunUnderWay } from './job-run-request.js';
import { loadSpan } from './load-span.js';
import { refreshProfiles } from './refresh-profiles.js';
import { SpanPartlyLoadedError } from './pipeline-errors.js';

/** Streams whose tables hold each customer's latest observed state (and its history). */
const STATE_STREAMS: ReadonlySet<StreamName> = new Set(['loyalty_status', 'vouchers']);

/**
 * A replay's work in its run (`runJob`): rebuilds the tables of a range from the raw archive, with no request to
 * the service. For each stream (in the order a run loads them: the customer directory first), every span the
 * archive holds marked committed with a window in the range is loaded again, in the order it was loaded, through
 * the very path a run takes (`loadSpan`), its source answering from the kept answers and its customers the ones
 * the span asked. The same answers give the same keys and rows; a state observation keeps the instant its answer
 * arrived. A window whose kept answers were never marked committed (its span failed, or was killed between its
 * commit and the mark) is not loaded, and is reported failed, as is a span the archive cannot answer.
 */
export async function replaySpans(run: RunUnderWay, replay: ArchiveReplay): Promise<void> {
  const replayed: { spans: number; eventsFailed: string[] } = { spans: 0, eventsFailed: [] };
  run.result.replayed = replayed;
  if (replay.events) replayed.eventsFailed = await replay.events(run.runId);
  // reference data first, as a run refreshes it: the profiles last kept say how custom fields are read
  if (replay.streams.includes('accounts') && (!replay.windows || (await replay.profilesRejected?.())))
    await replayProfiles(run, replay);
  for (const stream of STREAM_ORDER.filter((s) => replay.streams.includes(s))) await replayStream(stream, run, replay);
}

/** Loads again the newest profiles the archive holds (reference data is replaced whole, whatever the range). */
async function replayProfiles(run: RunUnderWay, replay: ArchiveReplay): Promise<void> {
  const { plan, destination } = run.request;
  const files = await replay.archive.spanFiles(plan.name, 'profiles');
  for (const file of files.reverse()) {
    const span = await readSpan(file.file);
    if (!span?.committed) continue;
    const api = new LoyaltyApi(new ArchivedSource(span), conventionsOf(plan));
    await refreshProfiles(
      api,
      destination,
      plan.name,
      run.runId,
      span.header.windows[0]!.start,
      undefined,
      plan.schemaContract,
    );
    return;
  }
  run.log.warn(
    { archive: replay.archive.root },
    'no profiles in the archive: profiles and profile_fields are left as they are',
  );
}

async function replayStream(name: StreamName, run: RunUnderWay, replay: ArchiveReplay): Promise<void> {
  const { plan, destination } = run.request;
  const { runId, result, log: logger } = run;
  const { from, to } = replay;
  const wanted = replay.windows ? await replay.windows(name) : undefined;
  const inRange = (w: Window) => w.end >= from && w.start <= to && (!wanted || wanted.has(w.start));
  const all = await replay.archive.spanFiles(plan.name, name);
  const files = all.filter((f) => f.through >= from && f.from <= to);
  // read before the replay records its own loads: which run last loaded each window the warehouse still has
  const doneBy = await destination.withConnection((conn) => windowsDoneBy(conn, plan.name, name));
  let chosen = await chooseSpans(files, inRange, doneBy);
  // A state table holds what the span loaded last says: a span replayed is followed by every later one of the
  // stream, whatever their windows, so that the newest observation is again the one the table holds.
  const first = chosen.spans[0];
  if (first && STATE_STREAMS.has(name)) {
    const later = await chooseSpans(
      all.filter((f) => f.opened >= first.opened),
      () => true,
      doneBy,
    );
    chosen = { spans: later.spans, uncommitted: chosen.uncommitted };
  }
  for (const [start, file] of chosen.uncommitted) {
    result.failed.push({
      stream: name,
      window: { start, end: start },
      error: `the answers kept for it (${file}) were never marked committed`,
    });
  }
  const stream = streamDefinition(name);
  for (const file of chosen.spans) {
    // the header and customers now, the answers as the load asks them: a span's answers are never held at once
    const span = (await readSpanSummary(file.file, { customers: true }))!;
    const source = new ArchivedSource(file.file);
    const windows: Window[] = span.header.windows;
    const ctx: StreamContext = {
      api: new LoyaltyApi(source, conventionsOf(plan)),
      pageSize: span.header.pageSize,
      concurrency: plan.sourceConcurrency,
      timezone: plan.timezone,
      job: plan.name,
      jobConfig: plan.job,
      logger,
      choiceLists: plan.multipleChoice,
      ...(stream.customerRule ? { customers: listed(span.customers) } : {}),
    };
    const settings = {
      job: plan.name,
      runId,
      firstDay: plan.job.first_day,
      rejectThreshold: plan.job.reject_threshold,
      schemaContract: plan.schemaContract,
    };
    result.replayed!.spans++;
    try {
      const counts = await loadSpan(stream, windows, ctx, destination, settings, logger);
      result.loaded.push(...counts.map((c) => ({ ...c, stream: name })));
    } catch (caught) {
      if (caught instanceof SpanPartlyLoadedError)
        result.loaded.push(...caught.loaded.map((c) => ({ ...c, stream: name })));
      const [error, failed] =
        caught instanceof SpanPartlyLoadedError ? [caught.cause, caught.failed] : [caught, windows];
      const message = redact(error instanceof Error ? error.message : String(error));
      logger.error({ stream: name, file: file.file, err: error }, 'archived span could not be replayed');
      for (const window of failed) result.failed.push({ stream: name, window, error: message });
    } finally {
      await source.close();
    }
  }
}

/**
 * The spans to load again, in the order they were loaded: every committed span holding a window of the range. A
 * state stream's history counts every observation, and a window loaded again replaces what it loaded before, so
 * loading them all in their order leaves what the original loads left. A window only spans never marked
 * committed hold is returned in `uncommitted` (with the newest such file). A span not marked is taken as committed
 * when the warehouse records its windows done by its run (`doneBy`: a kill came between its commit and the mark).
 */
async function chooseSpans(
  files: ArchivedSpanFile[],
  inRange: (w: Window) => boolean,
  doneBy: Set<string>,
): Promise<{ spans: ArchivedSpanFile[]; uncommitted: Map<Day, string> }> {
  const committed = new Set<Day>();
  const uncommitted = new Map<Day, string>();
  const spans: ArchivedSpanFile[] = [];
  for (const file of files) {
    const span = await readSpanSummary(file.file);
    const windows = (span?.header.windows ?? []).filter(inRange);
    if (!span || windows.length === 0) continue;
    const marked = span.committed || span.header.windows.every((w) => doneBy.has(`${w.start} ${span.header.runId}`));
    if (!marked) {
      for (const w of windows) uncommitted.set(w.start, file.file);
      continue;
    }
    for (const w of windows) committed.add(w.start);
    spans.push(file);
  }
  for (const day of committed) uncommitted.delete(day);
  return { spans, uncommitted };
}

async function* listed(customers: CustomerIdentity[]): AsyncIterable<CustomerIdentity> {
  yield* customers;
}

/** The source's conventions the original requests were made with: the archive keeps each answer by its request. */
export function conventionsOf(plan: JobPlan): SourceConventions {
  return { exportEnd: plan.exportEnd, firstPage: plan.firstPage };
}
