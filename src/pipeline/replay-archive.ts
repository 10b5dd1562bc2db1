import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { Destination } from '../load/destination.js';
import type { Logger } from '../log/logger.js';
import { redact } from '../log/redact.js';
import type { Day } from '../plan/days.js';
import type { JobPlan, StreamName } from '../plan/job-plan.js';
import type { Window } from '../plan/windows.js';
import {
  readSpan,
  readSpanSummary,
  type AnswerArchive,
  type ArchivedSpanFile,
} from '../source/archive/answer-archive.js';
import { ArchivedSource } from '../source/archive/archived-source.js';
import type { CustomerIdentity, SourceConventions } from '../source/loyalty-api.js';
import { LoyaltyApi } from '../source/loyalty-api.js';
import type { WindowCounts } from '../state/ledger.js';
import { windowsDoneBy } from '../state/replay-windows.js';
import { beginRun, finishRun } from '../state/runs.js';
import { STREAM_ORDER, streamDefinition } from '../streams/registry.js';
import type { StreamContext } from '../streams/stream.js';
import { loadSpan } from './load-span.js';
import { refreshProfiles } from './refresh-profiles.js';
import { recordWhileReconnecting } from './record-while-reconnecting.js';
import { SpanPartlyLoadedError } from './pipeline-errors.js';

/** Streams whose tables hold each customer's latest observed state (and its history). */
const STATE_STREAMS: ReadonlySet<StreamName> = new Set(['loyalty_status', 'vouchers']);

export interface ReplayRequest {
  plan: JobPlan;
  archive: AnswerArchive;
  destination: Destination;
  logger: Logger;
  from: Day;
  to: Day;
  streams: StreamName[];
  /** Only the windows holding rejected records (`replay --rejects`): after a fix, they load again from what was kept. */
  windows?: (stream: StreamName) => Promise<Set<Day>>;
  /** With `windows`: whether reference data holds fields loaded as NULL, so that the newest kept profiles load again. */
  profilesRejected?: () => Promise<boolean>;
  /** As recorded in `_etl_runs`. */
  command: string;
  /**
   * Writes the kept webhook events of the range again (`loyalty_events`), first, as a run ingests its spool
   * first; returns what could not be replayed, one line each.
   */
  events?: (runId: string) => Promise<string[]>;
}

export interface ReplayResult {
  runId: string;
  loaded: Array<WindowCounts & { stream: StreamName }>;
  failed: Array<{ stream: StreamName; window: Window; error: string }>;
  /** Spans read from the archive and loaded again. */
  spans: number;
  /** Kept webhook events that could not be replayed, one line each. */
  eventsFailed: string[];
}

/**
 * Rebuilds the tables of a range from the raw archive, with no request to the service. For each stream (in the
 * order a run loads them: the customer directory first), every span the archive holds marked committed with a
 * window in the range is loaded again, in the order it was loaded, through the very path a run takes
 * (`loadSpan`), its source answering from the kept answers and its customers the ones the span asked. The same answers give the same keys and rows; a state observation keeps the instant its
 * answer arrived. A window whose kept answers were never marked committed (its span failed, or was killed between
 * its commit and the mark) is not loaded, and is reported failed, as is a span the archive cannot answer.
 */
export async function replayArchive(request: ReplayRequest): Promise<ReplayResult> {
  const { plan, destination, logger } = request;
  const runId = randomUUID();
  const result: ReplayResult = { runId, loaded: [], failed: [], spans: 0, eventsFailed: [] };
  await destination.ledgerTransaction((conn) =>
    beginRun(conn, destination.capabilities, {
      runId,
      job: plan.name,
      command: request.command,
      startedAt: new Date().toISOString(),
      host: hostname(),
      pid: process.pid,
      leaseSeconds: plan.leaseSeconds,
      lock: `run:${plan.name}`,
    }),
  );
  let unexpected: string | undefined;
  try {
    if (request.events) result.eventsFailed = await request.events(runId);
    // reference data first, as a run refreshes it: the profiles last kept say how custom fields are read
    if (request.streams.includes('accounts') && (!request.windows || (await request.profilesRejected?.())))
      await replayProfiles(request, runId);
    for (const stream of STREAM_ORDER.filter((s) => request.streams.includes(s)))
      await replayStream(stream, request, runId, result);
  } catch (error) {
    unexpected = redact(error instanceof Error ? error.message : String(error));
    throw error;
  } finally {
    const first = result.failed[0];
    const error =
      unexpected ??
      (first
        ? `${result.failed.length} window(s) not replayed; first: ${first.stream} ${first.window.start}: ${first.error}`
        : result.eventsFailed.length > 0
          ? `${result.eventsFailed.length} webhook event(s) not replayed; first: ${result.eventsFailed[0]}`
          : null);
    await recordWhileReconnecting(() =>
      destination.ledgerTransaction((conn) =>
        finishRun(conn, {
          runId,
          status: error ? 'failed' : 'succeeded',
          error,
          requests: 0,
          finishedAt: new Date().toISOString(),
        }),
      ),
    ).catch((e: unknown) => logger.error({ err: e }, 'could not record the end of the replay'));
  }
  return result;
}

/** Loads again the newest profiles the archive holds (reference data is replaced whole, whatever the range). */
async function replayProfiles(request: ReplayRequest, runId: string): Promise<void> {
  const files = await request.archive.spanFiles(request.plan.name, 'profiles');
  for (const file of files.reverse()) {
    const span = await readSpan(file.file);
    if (!span?.committed) continue;
    const api = new LoyaltyApi(new ArchivedSource(span), conventionsOf(request.plan));
    await refreshProfiles(
      api,
      request.destination,
      request.plan.name,
      runId,
      span.header.windows[0]!.start,
      undefined,
      request.plan.schemaContract,
    );
    return;
  }
  request.logger.warn(
    { archive: request.archive.root },
    'no profiles in the archive: profiles and profile_fields are left as they are',
  );
}

async function replayStream(
  name: StreamName,
  request: ReplayRequest,
  runId: string,
  result: ReplayResult,
): Promise<void> {
  const { plan, destination, logger, from, to } = request;
  const wanted = request.windows ? await request.windows(name) : undefined;
  const inRange = (w: Window) => w.end >= from && w.start <= to && (!wanted || wanted.has(w.start));
  const all = await request.archive.spanFiles(plan.name, name);
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
    result.spans++;
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
function conventionsOf(plan: JobPlan): SourceConventions {
  return { exportEnd: plan.exportEnd, firstPage: plan.firstPage };
}
