import { readFieldDefinitions } from '../load/derived/field-definitions.js';
import type { Destination, SpanLoad } from '../load/destination.js';
import type { Logger } from '../log/logger.js';
import type { Day } from '../plan/days.js';
import type { SchemaContract } from '../plan/job-plan.js';
import { formatWindow, type Window } from '../plan/windows.js';
import type { CustomerRule } from '../plan/customer-rule.js';
import type { AnswerArchive } from '../source/archive/answer-archive.js';
import { selectCustomers } from '../state/customer-selection.js';
import { advanceEventBookmark } from '../state/event-bookmark.js';
import { addRowsLoaded, keptPostingRows, postingRowsOf } from '../state/postings-ledger.js';
import { advanceWatermark, recordWindowsDone, type WindowCounts } from '../state/ledger.js';
import { recordUnlistedFields, type UnlistedSighting } from '../state/unlisted-fields.js';
import { assertClaimed } from '../state/window-claims.js';
import type { StreamContext, StreamDefinition } from '../streams/stream.js';
import { countedCustomers } from './customer-tally.js';
import { checkNothingUnread, checkRejects } from './span-checks.js';
import { logLoaded, logNewFields } from './span-log.js';
import { stageSpan, tablesOf, type StagedSpan } from './stage-span.js';
import type { SpanShare, StagingBudget } from './staging-budget.js';
import { SpanPartlyLoadedError } from './pipeline-errors.js';

/** Settings of one span's load that do not come from the stream. */
export interface SpanSettings {
  job: string;
  runId: string;
  /** `destination.analysts.schema_contract`, for the commit's derived views. */
  schemaContract?: SchemaContract | undefined;
  firstDay: Day;
  /** A window fails when more than this share of its records is rejected (and at least `MIN_REJECTS_TO_FAIL`). */
  rejectThreshold: number;
  /** The run holding the span's windows; the commit is refused if it no longer does. */
  claimedBy?: string;
  /** The backfill the span is loaded for. */
  backfillId?: string;
  /** For a per-customer stream: which customers it asks (the stream's `customerRule`). */
  customers?: CustomerRule;
  /** The last day the run planned for the stream (see {@link selectCustomers}). */
  runThrough?: Day | undefined;
  /** For a per-customer stream, for the progress display: the customers selected, then those handed on to be asked. */
  customersAsked?: (asked: number, selected: number) => void;
  /** The raw archive the span's answers (and the customers it asks) are kept in, durably before its commit. */
  archive?: AnswerArchive;
  /** The limit on staged rows the spans loaded at once share (none: each span stages as its pages come). */
  staging?: StagingBudget;
}

/**
 * The path data takes, for one span (one or more consecutive windows) of one stream:
 *
 *   open (the customers a per-customer stream asks, the custom fields' definitions; staging) ─► extract pages ─► validate + normalize each
 *   record (a bad one goes to the rejects) ─► stage in batches ─► one transaction: claim check, merge into the
 *   targets and rejects, window ledger, watermark, event bookmark, fields the spec does not list.
 *
 * Memory holds one page at a time; the span's rows wait in the warehouse's staging tables (each destination
 * gathers them into batches of its own). Any error before the commit leaves the warehouse untouched. The page
 * loop is `stage-span.ts` (records to rows: `record-rows.ts`), the checks before the commit `span-checks.ts`.
 */
export async function loadSpan(
  stream: StreamDefinition,
  span: Window[],
  ctx: StreamContext,
  destination: Destination,
  settings: SpanSettings,
  logger: Logger,
): Promise<WindowCounts[]> {
  const started = performance.now();
  // the span's age in the staging budget counts from here: the oldest span still reading always reads on
  const share = settings.staging?.open();
  try {
    return await loadOpenedSpan(stream, span, ctx, destination, settings, logger, started, share);
  } finally {
    // its staging is gone (committed or aborted), or was never made
    share?.release();
    if (share)
      logger.debug(
        {
          stream: stream.name,
          window: formatWindow({ start: span[0]!.start, end: span.at(-1)!.end }),
          stagedBytes: share.staged,
          waitedMs: Math.round(share.waitedMs),
        },
        'span staged',
      );
  }
}

async function loadOpenedSpan(
  stream: StreamDefinition,
  span: Window[],
  ctx: StreamContext,
  destination: Destination,
  settings: SpanSettings,
  logger: Logger,
  started: number,
  share: SpanShare | undefined,
): Promise<WindowCounts[]> {
  // 1. open: the customers the span asks (a read of the warehouse), and staging for the stream's tables
  const selection = settings.customers
    ? await selectCustomers(
        (fn) => destination.withConnection(fn),
        settings.job,
        stream.name,
        settings.customers,
        span,
        new Date(),
        settings.runId,
        settings.runThrough,
      )
    : undefined;
  // the count is one more read of the selection, made only when someone follows the span's progress
  const report = settings.customersAsked;
  if (selection)
    ctx = {
      ...ctx,
      customers: report ? countedCustomers(selection.customers, await selection.count(), report) : selection.customers,
    };
  // custom field values are read by the fields' definitions, as the warehouse holds them when the span opens
  if (stream.fieldDefinitions)
    ctx = { ...ctx, fieldDefinitions: await destination.withConnection((conn) => readFieldDefinitions(conn)) };
  // every answer the span gets, and every customer it asks, goes to the raw archive as it comes
  const archived = settings.archive?.openSpan({
    job: settings.job,
    stream: stream.name,
    runId: settings.runId,
    windows: span,
    pageSize: ctx.pageSize,
  });
  if (archived) {
    ctx.api.keepAnswers(archived.keep);
    if (ctx.customers) ctx = { ...ctx, customers: archived.customers(ctx.customers) };
  }
  const load = await destination.openSpan({
    job: settings.job,
    stream: stream.name,
    runId: settings.runId,
    windows: span,
    tables: tablesOf(stream, ctx),
    schemaContract: settings.schemaContract,
  });
  const events = selection?.events ? { through: selection.events.through, timezone: ctx.timezone } : undefined;
  const ledger: SpanLedger = {
    job: settings.job,
    stream: stream.name,
    runId: settings.runId,
    firstDay: settings.firstDay,
    claimedBy: settings.claimedBy,
    backfillId: settings.backfillId,
    events,
    observesCustomers: stream.name === 'loyalty_postings',
  };
  const commit = async (windows: Window[], staged: StagedSpan) => {
    const unlisted: UnlistedFields = { seen: staged.unlisted.sightings(windows.map((w) => w.start)), fresh: [] };
    // an answer counted as loaded is in the archive: the span's file is durable before the transaction
    await archived?.seal();
    const counts = await commitWindows(load, ledger, windows, staged.extracted, ctx.api.counter, unlisted);
    await archived
      ?.committed()
      .catch((e: unknown) =>
        logger.warn({ stream: stream.name, err: e }, 'could not mark the archived span committed'),
      );
    logNewFields(stream, unlisted.fresh, settings.runId, logger);
    return counts;
  };
  try {
    // 2. extract, normalize and stage every page
    const staged = await stageSpan(stream, span, ctx, load, logger, share);
    share?.readAll();
    if (staged.stoppedBy === undefined) {
      await checkRejects(stream, span, staged, settings.rejectThreshold, load, logger);
      await checkNothingUnread(stream, span, staged, ctx);
      // 3. one transaction for the whole span
      const counts = await commit(span, staged);
      logLoaded(stream, counts, started, logger, selection);
      return counts;
    }
    // Reading stopped: the windows at the start of the span that were read to their end are kept; the others fail.
    const firstIncomplete = span.findIndex((w) => !staged.complete.has(w.start));
    const read = span.slice(0, firstIncomplete);
    // a bookmark covers the whole span's customers: it cannot move for part of it
    if (firstIncomplete <= 0 || selection?.events) throw staged.stoppedBy;
    await checkRejects(stream, read, staged, settings.rejectThreshold, load, logger);
    for (const w of span.slice(firstIncomplete))
      if (staged.extracted.has(w.start) || staged.rejected.has(w.start)) await load.reset(w.start);
    const counts = await commit(read, staged).catch(() => {
      throw staged.stoppedBy; // nothing was committed: the span fails for what stopped its reading
    });
    logLoaded(stream, counts, started, logger, selection);
    throw new SpanPartlyLoadedError(staged.stoppedBy, counts, span.slice(firstIncomplete));
  } catch (error) {
    // the span's reading stopped: requests still queued or retrying for it (other customers' postings) stop now
    ctx.api.cancel('its window failed');
    // a partly loaded span has committed (and released) what it could
    if (!(error instanceof SpanPartlyLoadedError)) await load.abort();
    await archived?.close().catch(() => undefined); // its answers stay, unmarked: the span did not commit
    throw error;
  }
}

/** What a span's commit records besides its rows. */
export interface SpanLedger {
  job: string;
  stream: string;
  runId: string;
  firstDay: Day;
  /** The run that must still hold the windows (see `state/window-claims.ts`). */
  claimedBy?: string;
  /** The backfill the windows count as done for. */
  backfillId?: string;
  /** A `webhook` selection's last event, and the zone of window days: the event bookmark moves past it. */
  events?: { through: number; timezone: string };
  /**
   * The stream records the customers it asked (postings): a window's ledger counts the rows the span loaded and
   * those of the customers it did not ask, and windows before the span that a sweep added rows to are counted too.
   */
  observesCustomers?: boolean;
}

/** The members the spec does not list that a span's windows loaded (`seen`); the commit fills in those seen for the first time (`fresh`). */
export interface UnlistedFields {
  seen: UnlistedSighting[];
  fresh: UnlistedSighting[];
}

/**
 * The span's transaction, in order: the run must still hold the windows; the loader merges their staged rows;
 * the windows are recorded done with what they loaded; the watermark moves across done windows; a `webhook`
 * selection's event bookmark moves past the events it asked about; the unlisted members loaded are recorded in
 * `_etl_unlisted_fields`. All of it commits, or none of it.
 */
export function commitWindows(
  load: SpanLoad,
  ledger: SpanLedger,
  windows: Window[],
  extracted: Map<Day, number>,
  sent: number | { requests: number; retries?: number },
  unlisted: UnlistedFields = { seen: [], fresh: [] },
): Promise<WindowCounts[]> {
  const { job, stream, runId } = ledger;
  const { requests, retries = 0 } = typeof sent === 'number' ? { requests: sent } : sent;
  return load.commit(windows, async (conn, merge) => {
    if (ledger.claimedBy !== undefined) await assertClaimed(conn, job, stream, windows, ledger.claimedBy);
    const starts = new Set(windows.map((w) => w.start));
    // windows before the span that a swept customer's postings went to
    const before = ledger.observesCustomers ? [...extracted.keys()].filter((d) => !starts.has(d)) : [];
    const held = await postingRowsOf(conn, before);
    const merged = await merge();
    const kept = ledger.observesCustomers
      ? await keptPostingRows(conn, stream, merged.loadedAt, [...starts])
      : new Map<Day, number>();
    if (before.length > 0) {
      const after = await postingRowsOf(conn, before);
      await addRowsLoaded(conn, job, stream, new Map(before.map((d) => [d, (after.get(d) ?? 0) - (held.get(d) ?? 0)])));
    }
    const counts = windows.map((window, i) => ({
      window,
      extracted: extracted.get(window.start) ?? 0,
      loaded: (merged.loaded.get(window.start) ?? 0) + (kept.get(window.start) ?? 0),
      rejected: merged.rejected.get(window.start) ?? 0,
      fieldsRejected: merged.fieldsRejected.get(window.start) ?? 0,
      // the span's requests are recorded on its first window
      requests: i === 0 ? requests : 0,
      retries: i === 0 ? retries : 0,
    }));
    await recordWindowsDone(conn, job, stream, runId, merged.loadedAt, counts, { backfillId: ledger.backfillId });
    await advanceWatermark(conn, job, stream, ledger.firstDay, runId, merged.loadedAt);
    const events = ledger.events;
    if (events)
      await advanceEventBookmark(conn, {
        job,
        stream,
        askedThrough: events.through,
        timezone: events.timezone,
        runId,
        now: merged.loadedAt,
      });
    if (unlisted.seen.length > 0)
      unlisted.fresh = await recordUnlistedFields(conn, runId, merged.loadedAt, unlisted.seen);
    return counts;
  });
}
