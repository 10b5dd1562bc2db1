import type { StreamName } from '../plan/job-plan.js';
import type { Destination } from '../load/destination.js';
import { Mutex } from '../load/warehouse/mutex.js';
import { addDays, maxDay, type Day } from '../plan/days.js';
import { groupWindows, type Window } from '../plan/windows.js';
import type { Backfill } from '../state/backfills.js';
import { windowsNotDone } from '../state/directory.js';
import { ensureWindowRows } from '../state/ledger.js';
import { backfillWindowCounts, claimNextSpans, claimWindows, failOpenWindows } from '../state/window-claims.js';

/** What a worker lane gets from its queue: a span it now holds, a pause, or the end of the stream. */
export type NextSpan = Window[] | 'wait' | undefined;

/**
 * The windows of one stream a run works through. `next` claims the next span for the run; it answers `'wait'`
 * when what is left is held by other live workers (their windows fall free if they die), and `undefined` when
 * the stream is finished. Lanes of one process call it one at a time.
 */
export interface WindowQueue {
  next(): Promise<NextSpan>;
  /** Windows the queue gave up on without loading them, and why. */
  readonly skipped: Array<{ window: Window; error: string }>;
  /** The last day of the windows a run planned (a backfill's queue: undefined). */
  readonly lastDay?: Day;
}

interface QueueContext {
  job: string;
  stream: StreamName;
  runId: string;
  destination: Destination;
}

/**
 * The spans planned by `run` (or the demo), claimed one by one; a span held by another worker is retried later.
 * With `skipDone`, windows another worker finished meanwhile are dropped once claimed instead of loaded again
 * (the customer directory, which every worker of a backfill makes sure of).
 */
export class PlannedQueue implements WindowQueue {
  readonly skipped: Array<{ window: Window; error: string }> = [];
  readonly lastDay: Day | undefined;
  private readonly turn = new Mutex();

  constructor(
    private readonly ctx: QueueContext,
    private readonly spans: Window[][],
    private readonly options: { skipDone?: boolean } = {},
  ) {
    const ends = spans.flat().map((w) => w.end);
    this.lastDay = ends.length > 0 ? ends.reduce(maxDay) : undefined;
  }

  next(): Promise<NextSpan> {
    return this.turn.run(async () => {
      const { destination, job, stream, runId } = this.ctx;
      for (let i = 0; i < this.spans.length;) {
        const span = this.spans[i]!;
        const claim = await destination.ledgerTransaction(async (conn) => {
          const left = this.options.skipDone ? await windowsNotDone(conn, job, stream, span) : span;
          if (left.length < span.length) return left;
          await ensureWindowRows(conn, job, stream, span, runId);
          return (await claimWindows(conn, destination.capabilities, { job, stream, runId }, span))
            ? 'claimed'
            : 'held';
        });
        if (claim === 'held') i++;
        else if (claim === 'claimed') return this.spans.splice(i, 1)[0]!;
        // windows done meanwhile by another worker are dropped; what is left is tried again
        else this.spans.splice(i, 1, ...groupWindows(claim, Number.MAX_SAFE_INTEGER));
      }
      return this.spans.length === 0 ? undefined : 'wait';
    });
  }
}

/**
 * A backfill's windows of one stream, claimed from `_etl_windows` in order, shared with every worker of the
 * backfill. The stream is finished for this worker when every window is done or failed for the backfill, so
 * the workers move on to the next stream together — postings only ask for customers once the range's
 * accounts are loaded.
 */
export class BackfillQueue implements WindowQueue {
  readonly skipped: Array<{ window: Window; error: string }> = [];
  private readonly turn = new Mutex();
  /** Spans claimed in one go for the lanes of this process, not yet handed out. */
  private readonly claimed: Window[][] = [];
  private to: Day;

  private constructor(
    private readonly ctx: QueueContext,
    private readonly backfill: Backfill,
    private readonly limits: { maxDays: number; maxWindows: number; spans: number },
  ) {
    this.to = backfill.to;
  }

  /**
   * The queue of `stream`. With `unknownAfter` (a per-customer stream), windows that start after the day through
   * which the customer directory is complete are failed at once with its error: the customers to ask are not
   * known. `limits.spans` spans are claimed per transaction (one per lane of this process).
   */
  static async open(
    ctx: QueueContext,
    backfill: Backfill,
    limits: { maxDays: number; maxWindows: number; spans: number },
    unknownAfter?: { after: Day; error: string },
  ): Promise<BackfillQueue> {
    const queue = new BackfillQueue(ctx, backfill, limits);
    if (unknownAfter && unknownAfter.after < backfill.to) {
      const { after, error } = unknownAfter;
      queue.to = after;
      const scope = {
        job: ctx.job,
        stream: ctx.stream,
        runId: ctx.runId,
        backfillId: backfill.backfillId,
        from: addDays(after, 1),
        to: backfill.to,
      };
      const given = await ctx.destination.ledgerTransaction((conn) =>
        failOpenWindows(conn, ctx.destination.capabilities, scope, error, new Date().toISOString()),
      );
      queue.skipped.push(...given.map((window) => ({ window, error })));
    }
    return queue;
  }

  next(): Promise<NextSpan> {
    return this.turn.run(async () => {
      const { destination, job, stream, runId } = this.ctx;
      const scope = { job, stream, runId, backfillId: this.backfill.backfillId, from: this.backfill.from, to: this.to };
      if (this.claimed.length === 0 && this.to >= this.backfill.from) {
        this.claimed.push(
          ...(await destination.ledgerTransaction((conn) =>
            claimNextSpans(conn, destination.capabilities, scope, this.limits),
          )),
        );
      }
      const span = this.claimed.shift();
      if (span) return span;
      const counts = await destination.withConnection((conn) =>
        backfillWindowCounts(conn, {
          job,
          backfillId: this.backfill.backfillId,
          from: this.backfill.from,
          to: this.backfill.to,
          streams: [stream],
          runId,
        }),
      );
      // the windows left in this run's other lanes are theirs to finish: only another worker's are worth waiting for
      return counts.open === counts.heldByRun ? undefined : 'wait';
    });
  }
}
