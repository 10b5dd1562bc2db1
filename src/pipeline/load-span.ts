import { readFieldDefinitions } from '../load/derived/field-definitions.js';
import type { Destination, FieldReject, SpanLoad } from '../load/destination.js';
import type { Row, TableSpec } from '../load/table-spec.js';
import type { Logger } from '../log/logger.js';
import type { Day } from '../plan/days.js';
import type { SchemaContract } from '../plan/job-plan.js';
import { formatWindow, type Window } from '../plan/windows.js';
import type { CustomerRule } from '../plan/customer-rule.js';
import type { AnswerArchive } from '../source/archive/answer-archive.js';
import { selectCustomers, type CustomerSelection } from '../state/customer-selection.js';
import { advanceEventBookmark } from '../state/event-bookmark.js';
import { addRowsLoaded, keptPostingRows, postingRowsOf } from '../state/postings-ledger.js';
import { advanceWatermark, assertClaimed, recordWindowsDone, type WindowCounts } from '../state/ledger.js';
import { recordUnlistedFields, type UnlistedSighting } from '../state/unlisted-fields.js';
import { customerObservationsTable, observationRows } from '../streams/customer-observations.js';
import type { StreamContext, StreamDefinition } from '../streams/stream.js';
import { FIELD_REJECTS } from '../transform/field-problems.js';
import { RecordError } from '../transform/record-error.js';
import { countedCustomers } from './customer-tally.js';
import { stagedBytes, type SpanShare, type StagingBudget } from './staging-budget.js';
import { UndatedVersions } from './undated-versions.js';
import { UnlistedTally } from './unlisted-tally.js';
import { WindowNormalizers } from './window-normalizers.js';
import { RejectThresholdError, SpanPartlyLoadedError, UnreadRecordsError } from './pipeline-errors.js';

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

/** Windows with fewer rejects than this never fail on the threshold: one bad record in a tiny window is noise. */
export const MIN_REJECTS_TO_FAIL = 10;

/**
 * The path data takes, for one span (one or more consecutive windows) of one stream:
 *
 *   open (the customers a per-customer stream asks, the custom fields' definitions; staging) ─► extract pages ─► validate + normalize each
 *   record (a bad one goes to the rejects) ─► stage in batches ─► one transaction: claim check, merge into the
 *   targets and rejects, window ledger, watermark, event bookmark, fields the spec does not list.
 *
 * Memory holds one page at a time; the span's rows wait in the warehouse's staging tables (each destination
 * gathers them into batches of its own). Any error before the commit leaves the warehouse untouched.
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
    const counts = await commitWindows(load, ledger, windows, staged.extracted, ctx.api.counter.requests, unlisted);
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

/** The stream's tables, without the history of those whose job turned it off (`jobs.<name>.history.<stream>: false`). */
function tablesOf(stream: StreamDefinition, ctx: StreamContext): TableSpec[] {
  const history: Partial<Record<string, boolean>> = ctx.jobConfig.history ?? {};
  if (history[stream.name] !== false) return stream.tables;
  return stream.tables.map(({ history: _, ...spec }) => spec);
}

/** What a span staged, per window start; `stoppedBy` is what stopped its reading before the end, if anything did. */
interface StagedSpan {
  extracted: Map<Day, number>;
  rejected: Map<Day, number>;
  /** The first reject's reason of each window, for the line of a window whose every record was rejected. */
  firstReject: Map<Day, string>;
  /** Windows whose listing was read to its end. */
  complete: Set<Day>;
  /** The members the spec does not list that the staged rows carry. */
  unlisted: UnlistedTally;
  /** The records whose history version the source gives no day for. */
  undated: UndatedVersions;
  stoppedBy?: unknown;
}

/** Extracts the span's pages, normalizes each record (a bad one is staged as a reject) and stages the rows. */
async function stageSpan(
  stream: StreamDefinition,
  span: Window[],
  ctx: StreamContext,
  load: SpanLoad,
  logger: Logger,
  share: SpanShare | undefined,
): Promise<StagedSpan> {
  const staged: StagedSpan = {
    extracted: new Map(),
    rejected: new Map(),
    firstReject: new Map(),
    complete: new Set(),
    unlisted: new UnlistedTally(stream.tables),
    undated: new UndatedVersions(tablesOf(stream, ctx), span),
  };
  // a normalizer per window: occurrence numbers count within a window, whatever the span holds
  const normalizers = new WindowNormalizers(() => stream.normalizer(ctx));
  let seq = 0;
  const pages = stream.extract(ctx, span)[Symbol.asyncIterator]();
  let done = false;
  try {
    for (;;) {
      // the next page waits for room in the budget the spans in flight share: the source is not asked meanwhile
      const room = share?.room();
      if (room) await room;
      const next = await pages.next();
      if (next.done) {
        done = true;
        break;
      }
      const batch = next.value;
      if (batch.windowComplete) staged.complete.add(batch.windowStart);
      if (batch.restart) {
        const window = span.find((w) => w.start === batch.windowStart) ?? {
          start: batch.windowStart,
          end: batch.windowStart,
        };
        logger.warn(
          { stream: stream.name, window: formatWindow(window), reason: batch.reason },
          'source changed while it was read; reading the window again',
        );
        await load.reset(batch.windowStart);
        normalizers.forget(batch.windowStart);
        staged.extracted.delete(batch.windowStart);
        staged.rejected.delete(batch.windowStart);
        staged.unlisted.forget(batch.windowStart);
        staged.undated.forget(batch.windowStart);
        staged.firstReject.delete(batch.windowStart);
      }
      const { rows, invalid } = normalizeRecords(normalizers.normalize, batch.records, batch.windowStart, seq);
      if (batch.windowComplete) normalizers.forget(batch.windowStart);
      seq += batch.records.length;
      const rejects: Array<{ windowStart: Day; payload: string; error: string }> = [];
      // what the extractor rejected (a customer that cannot be asked) is recorded, but is no record of the window
      for (const r of batch.rejects ?? [])
        rejects.push({ windowStart: batch.windowStart, payload: safeJson(r.payload), error: storableMessage(r.error) });
      for (const r of invalid)
        rejects.push({
          windowStart: batch.windowStart,
          payload: safeJson(r.raw),
          error: storableMessage(r.error.message),
        });
      add(staged.extracted, batch.windowStart, batch.records.length);
      add(staged.rejected, batch.windowStart, rejects.length - (batch.rejects?.length ?? 0));
      if (invalid.length > 0 && !staged.firstReject.has(batch.windowStart))
        staged.firstReject.set(batch.windowStart, invalid[0]!.error.message);
      const observed = batch.observed?.length ? observationRows(stream.name, batch.observed) : [];
      // (a window read again keeps what its first reading counted until the span ends: the budget errs low)
      if (share) {
        let bytes = stagedBytes(observed.map((row) => ({ row })));
        for (const list of rows.values()) bytes += stagedBytes(list);
        share.add(bytes);
      }
      for (const [table, list] of rows) {
        // fields loaded as NULL are no rows of the stream: they are kept with their raw values
        if (table === FIELD_REJECTS) {
          await load.rejectFields(list.map((r) => fieldReject(r.windowStart, r.row)));
          continue;
        }
        staged.unlisted.add(table, list, batch.windowStart);
        staged.undated.add(table, list, batch.windowStart);
        await load.append(table, list);
      }
      if (observed.length > 0) {
        const observations = observed.map((row) => ({
          seq: 0,
          windowStart: batch.windowStart,
          row,
        }));
        await load.append(customerObservationsTable.name, observations);
      }
      await load.reject(rejects);
    }
  } catch (error) {
    staged.stoppedBy = error;
  } finally {
    // as `for await` does when its body ends early: the extractor's own cleanup runs
    if (!done) await pages.return?.(undefined).catch(() => undefined);
  }
  staged.undated.warn(stream.name, logger);
  return staged;
}

/** Rows staged per table, each with the occurrence number of its source record and its window. */
export type StagedRowsByTable = Map<string, Array<{ seq: number; windowStart: Day; row: Row }>>;

/**
 * Normalizes a batch of one window's records into rows per table, numbering the records from `seq + 1`; a record
 * the normalizer refuses (a RecordError) is handed back in `invalid`, any other error is thrown.
 */
export function normalizeRecords(
  normalize: (raw: unknown, windowStart: Day) => Record<string, Row[]>,
  records: unknown[],
  windowStart: Day,
  seq: number,
): { rows: StagedRowsByTable; invalid: Array<{ raw: unknown; error: RecordError }> } {
  const rows: StagedRowsByTable = new Map();
  const invalid: Array<{ raw: unknown; error: RecordError }> = [];
  for (const raw of records) {
    seq++;
    try {
      for (const [table, tableRows] of Object.entries(normalize(raw, windowStart))) {
        let list = rows.get(table);
        if (!list) rows.set(table, (list = []));
        for (const row of tableRows) list.push({ seq, windowStart, row });
      }
    } catch (error) {
      if (!(error instanceof RecordError)) throw error;
      invalid.push({ raw, error });
    }
  }
  return { rows, invalid };
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
  requests: number,
  unlisted: UnlistedFields = { seen: [], fresh: [] },
): Promise<WindowCounts[]> {
  const { job, stream, runId } = ledger;
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
      requests: i === 0 ? requests : 0, // the span's requests are recorded on its first window
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

/**
 * A window fails when more than `threshold` of its records were rejected (and at least `MIN_REJECTS_TO_FAIL`),
 * or when every record it read was rejected, whatever their number: a window of rejects alone says the service
 * shapes or names something otherwise than the pipeline reads it, not that one record was bad. The rejects of the
 * windows that fail still go to `_etl_rejects` (in place of those of an earlier reading of the windows), where the
 * failure line sends the operator; nothing else of theirs is loaded.
 */
async function checkRejects(
  stream: StreamDefinition,
  windows: Window[],
  staged: StagedSpan,
  threshold: number,
  load: SpanLoad,
  logger: Logger,
): Promise<void> {
  const failing: Array<{ window: Window; message: string }> = [];
  for (const window of windows) {
    const bad = staged.rejected.get(window.start) ?? 0;
    const total = staged.extracted.get(window.start) ?? 0;
    if (total > 0 && bad === total)
      failing.push({
        window,
        message:
          `${stream.name} ${formatWindow(window)}: all ${total} records rejected (the first: ${staged.firstReject.get(window.start) ?? 'no reason'}); ` +
          'see _etl_rejects: the service may name or shape a field otherwise than the pipeline reads it',
      });
    else if (bad >= MIN_REJECTS_TO_FAIL && bad > total * threshold)
      failing.push({
        window,
        message: `${stream.name} ${formatWindow(window)}: ${bad} of ${total} records rejected, more than the threshold of ${threshold * 100}%; see _etl_rejects`,
      });
  }
  if (failing.length === 0) return;
  await load
    .keepRejects(failing.map((f) => f.window.start))
    .catch((error: unknown) =>
      logger.warn({ stream: stream.name, err: error }, 'could not keep the rejects of the windows that failed on them'),
    );
  throw new RejectThresholdError(failing[0]!.message);
}

/**
 * A span of a listing filtered by date that read no record at all is asked for its count as a whole (one request):
 * a source that counts records in those days while its windows list none reads the range otherwise than the
 * pipeline asks it (most often an export that leaves out its `end` day), and recording the windows done would
 * lose those records for good.
 */
async function checkNothingUnread(
  stream: StreamDefinition,
  span: Window[],
  staged: StagedSpan,
  ctx: StreamContext,
): Promise<void> {
  if (!stream.countRange) return;
  for (const window of span) if ((staged.extracted.get(window.start) ?? 0) > 0) return;
  const range = { start: span[0]!.start, end: span.at(-1)!.end };
  const counted = await stream.countRange(ctx.api, range);
  if (counted === 0) return;
  throw new UnreadRecordsError(
    `${stream.name} ${formatWindow(range)}: the source counts ${counted} records in these days, but reading its windows found none; ` +
      'if the export leaves out its end day, set source.export_end: exclusive in jobs.yaml',
  );
}

/** A field reject as a normalizer emits it (a row of `FIELD_REJECTS`), as either warehouse can store it. */
export function fieldReject(windowStart: Day, row: Row): FieldReject {
  const text = (v: unknown) => (v === null || v === undefined ? null : String(v));
  return {
    windowStart,
    recordKey: text(row.record_key) ?? '',
    // a field's path may hold a source key (`customFieldMap.<name>`): without NULs, as either warehouse stores it
    field: storableMessage(text(row.field) ?? '').toWellFormed(),
    rawValue: text(row.raw_value),
    error: storableMessage(text(row.error) ?? '').toWellFormed(),
  };
}

function add(counts: Map<Day, number>, day: Day, n: number): void {
  counts.set(day, (counts.get(day) ?? 0) + n);
}

function logLoaded(
  stream: StreamDefinition,
  counts: WindowCounts[],
  started: number,
  logger: Logger,
  selection: CustomerSelection | undefined,
): void {
  const events = selection?.events
    ? { eventsAfter: selection.events.after ?? null, eventsThrough: selection.events.through }
    : {};
  for (const c of counts) {
    logger.debug(
      {
        stream: stream.name,
        window: formatWindow(c.window),
        ...(selection ? { selection: selection.kind, ...events } : {}),
        extracted: c.extracted,
        loaded: c.loaded,
        rejected: c.rejected,
        requests: c.requests,
        ms: Math.round(performance.now() - started),
      },
      'window loaded',
    );
  }
}

/** Says once, when the commit that first loaded it is done, each member the spec does not list. */
function logNewFields(
  stream: StreamDefinition,
  fresh: readonly UnlistedSighting[],
  runId: string,
  logger: Logger,
): void {
  for (const f of fresh) {
    logger.warn(
      { stream: stream.name, recordType: f.recordType, field: f.path, table: f.table, records: f.records, runId },
      `new field ${f.path} on ${f.recordType} first seen in run ${runId} (kept in ${f.table}._unlisted)`,
    );
  }
}

/**
 * A reject's message as either warehouse stores it: it may quote a source key (`customFieldMap.<name>: …`), and
 * a NUL in a key, which PostgreSQL text cannot hold, is written as `\u0000`, as the payload's JSON writes it.
 */
function storableMessage(message: string): string {
  return message.includes('\u0000') ? message.replaceAll('\u0000', '\\u0000') : message;
}

function safeJson(value: unknown): string {
  try {
    return JSON.stringify(value) ?? 'null';
  } catch {
    return JSON.stringify(String(value));
  }
}
