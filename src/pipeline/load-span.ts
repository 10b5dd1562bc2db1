import type { Destination, SpanCommitInfo } from '../load/destination.js';
import type { SqlConnection } from '../load/sql-connection.js';
import type { Row } from '../load/table-spec.js';
import type { Logger } from '../log/logger.js';
import type { Day } from '../plan/days.js';
import { formatWindow, type Window } from '../plan/windows.js';
import type { WindowCounts } from '../state/ledger.js';
import type { StreamContext, StreamDefinition } from '../streams/stream.js';
import { RecordError } from '../transform/record-error.js';

/** Settings of one span's load that do not come from the stream. */
export interface SpanSettings {
  job: string;
  runId: string;
  firstDay: Day;
  /** A window fails when more than this share of its records is rejected (and at least `MIN_REJECTS_TO_FAIL`). */
  rejectThreshold: number;
  /** The run holding the span's windows; the commit is refused if it no longer does. */
  claimedBy?: string;
  /** The backfill the span is loaded for. */
  backfillId?: string;
}

/**
 * Reading a span stopped with `cause` after its first windows were read to the end: those were committed
 * (`loaded`), the others (`failed`) were not.
 */
export class SpanPartlyLoadedError extends Error {
  override readonly name = 'SpanPartlyLoadedError';

  constructor(
    override readonly cause: unknown,
    readonly loaded: WindowCounts[],
    readonly failed: Window[],
  ) {
    super(cause instanceof Error ? cause.message : String(cause));
  }
}

/** A window whose share of rejected records passed the threshold. */
export class RejectThresholdError extends Error {
  override readonly name = 'RejectThresholdError';
}

/** Windows with fewer rejects than this never fail on the threshold: one bad record in a tiny window is noise. */
export const MIN_REJECTS_TO_FAIL = 10;

/**
 * The path data takes, for one span (one or more consecutive windows) of one stream:
 *
 *   extract pages ─► validate + normalize each record (a bad one goes to the rejects) ─► stage in batches
 *   ─► one transaction: merge into the targets, rejects, window ledger, watermark.
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
  // Work a stream registers (its own bookmark) runs in the span's commit transaction.
  const commitWork: Array<(conn: SqlConnection, commit: SpanCommitInfo) => Promise<void>> = [];
  ctx = { ...ctx, onCommit: (work) => commitWork.push(work) };
  const onCommit = async (conn: SqlConnection, commit: SpanCommitInfo) => {
    for (const work of commitWork) await work(conn, commit);
  };
  const load = await destination.openSpan({
    job: settings.job,
    stream: stream.name,
    runId: settings.runId,
    firstDay: settings.firstDay,
    windows: span,
    tables: stream.tables,
    onCommit,
    claimedBy: settings.claimedBy,
    backfillId: settings.backfillId,
  });
  try {
    let normalize = stream.normalizer(ctx);
    const extracted = new Map<Day, number>();
    const rejected = new Map<Day, number>();
    let seq = 0;
    /** Windows whose listing was read to its end. */
    const complete = new Set<Day>();
    const checkRejects = (windows: Window[]) => {
      for (const window of windows) {
        const bad = rejected.get(window.start) ?? 0;
        const total = extracted.get(window.start) ?? 0;
        if (bad >= MIN_REJECTS_TO_FAIL && bad > total * settings.rejectThreshold) {
          throw new RejectThresholdError(`${stream.name} ${formatWindow(window)}: ${bad} of ${total} records rejected, more than the threshold of ${settings.rejectThreshold * 100}%`);
        }
      }
    };

    try {
      for await (const batch of stream.extract(ctx, span)) {
        if (batch.windowComplete) complete.add(batch.windowStart);
        if (batch.restart) {
          const window = span.find((w) => w.start === batch.windowStart) ?? { start: batch.windowStart, end: batch.windowStart };
          logger.warn({ stream: stream.name, window: formatWindow(window), reason: batch.reason }, 'source changed while it was read; reading the window again');
          await load.reset(batch.windowStart);
          normalize = stream.normalizer(ctx);
          extracted.delete(batch.windowStart);
          rejected.delete(batch.windowStart);
        }
        const rows = new Map<string, Array<{ seq: number; windowStart: Day; row: Row }>>();
        const rejects: Array<{ windowStart: Day; payload: string; error: string }> = [];
        // what the extractor rejected (a customer that cannot be asked) is recorded, but is no record of the window
        for (const r of batch.rejects ?? []) rejects.push({ windowStart: batch.windowStart, payload: safeJson(r.payload), error: storableMessage(r.error) });
        for (const raw of batch.records) {
          seq++;
          try {
            const normalized = normalize(raw, batch.windowStart);
            for (const [table, tableRows] of Object.entries(normalized)) {
              let list = rows.get(table);
              if (!list) rows.set(table, (list = []));
              for (const row of tableRows) list.push({ seq, windowStart: batch.windowStart, row });
            }
          } catch (error) {
            if (!(error instanceof RecordError)) throw error;
            rejects.push({ windowStart: batch.windowStart, payload: safeJson(raw), error: storableMessage(error.message) });
          }
        }
        extracted.set(batch.windowStart, (extracted.get(batch.windowStart) ?? 0) + batch.records.length);
        rejected.set(batch.windowStart, (rejected.get(batch.windowStart) ?? 0) + rejects.length - (batch.rejects?.length ?? 0));
        for (const [table, list] of rows) await load.append(table, list);
        await load.reject(rejects);
      }
    } catch (error) {
      // the windows at the start of the span that were read to their end are kept; the others fail
      const firstIncomplete = span.findIndex((w) => !complete.has(w.start));
      const read = span.slice(0, firstIncomplete);
      if (firstIncomplete <= 0 || commitWork.length > 0) throw error;
      checkRejects(read);
      for (const w of span.slice(firstIncomplete)) if (extracted.has(w.start) || rejected.has(w.start)) await load.reset(w.start);
      let counts: WindowCounts[];
      try {
        counts = await load.commit(extracted, ctx.api.counter.requests, read);
      } catch {
        throw error; // nothing was committed: the span fails for what stopped its reading
      }
      logLoaded(stream, counts, started, logger);
      throw new SpanPartlyLoadedError(error, counts, span.slice(firstIncomplete));
    }

    checkRejects(span);
    const counts = await load.commit(extracted, ctx.api.counter.requests);
    logLoaded(stream, counts, started, logger);
    return counts;
  } catch (error) {
    // the span's reading stopped: requests still queued or retrying for it (other customers' postings) stop now
    ctx.api.cancel('its window failed');
    // a partly loaded span has committed (and released) what it could
    if (!(error instanceof SpanPartlyLoadedError)) await load.abort();
    throw error;
  }
}

function logLoaded(stream: StreamDefinition, counts: WindowCounts[], started: number, logger: Logger): void {
  for (const c of counts) {
    logger.info(
      { stream: stream.name, window: formatWindow(c.window), extracted: c.extracted, loaded: c.loaded, rejected: c.rejected, requests: c.requests, ms: Math.round(performance.now() - started) },
      'window loaded',
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
