import type { SpanLoad } from '../load/destination.js';
import type { TableSpec } from '../load/table-spec.js';
import type { Logger } from '../log/logger.js';
import type { Day } from '../plan/days.js';
import { formatWindow, type Window } from '../plan/windows.js';
import { customerObservationsTable, observationRows } from '../streams/customer-observations.js';
import type { StreamContext, StreamDefinition } from '../streams/stream.js';
import { FIELD_REJECTS } from '../transform/field-problems.js';
import { fieldReject, normalizeRecords, safeJson, storableMessage } from './record-rows.js';
import { stagedBytes, type SpanShare } from './staging-budget.js';
import { UndatedVersions } from './undated-versions.js';
import { UnlistedTally } from './unlisted-tally.js';
import { WindowNormalizers } from './window-normalizers.js';

/** The stream's tables, without the history of those whose job turned it off (`jobs.<name>.history.<stream>: false`). */
export function tablesOf(stream: StreamDefinition, ctx: StreamContext): TableSpec[] {
  const history: Partial<Record<string, boolean>> = ctx.jobConfig.history ?? {};
  if (history[stream.name] !== false) return stream.tables;
  return stream.tables.map(({ history: _, ...spec }) => spec);
}

/** What a span staged, per window start; `stoppedBy` is what stopped its reading before the end, if anything did. */
export interface StagedSpan {
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
export async function stageSpan(
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

function add(counts: Map<Day, number>, day: Day, n: number): void {
  counts.set(day, (counts.get(day) ?? 0) + n);
}
