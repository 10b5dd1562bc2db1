import type { StreamName } from '../config/config-schema.js';
import type { Destination } from '../load/destination.js';
import { Mutex } from '../load/mutex.js';
import { addDays, type Day } from '../plan/days.js';
import type { Window } from '../plan/windows.js';
import type { Backfill } from '../state/backfills.js';
import { ensureWindowRows } from '../state/ledger.js';
import { backfillWindowCounts, claimNextSpans, claimWindows, failOpenWindows, firstFailedWindow } from '../state/window-claims.js';

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
}

interface QueueContext {
  job: string;
  stream: StreamName;
  runId: string;
  destination: Destination;
}

/** The spans planned by `run` (or the demo), claimed one by one; a span held by another worker is retried later. */
export class PlannedQueue implements WindowQueue {
  readonly skipped: Array<{ window: Window; error: string }> = [];
  private readonly turn = new Mutex();

  constructor(
    private readonly ctx: QueueContext,
    private readonly spans: Window[][],
  ) {}

  next(): Promise<NextSpan> {
    return this.turn.run(async () => {
      if (this.spans.length === 0) return undefined;
      const { destination, job, stream, runId } = this.ctx;
      for (let i = 0; i < this.spans.length; i++) {
        const span = this.spans[i]!;
        const claimed = await destination.ledgerTransaction(async (conn) => {
          await ensureWindowRows(conn, job, stream, span, runId);
          return claimWindows(conn, destination.capabilities, { job, stream, runId }, span);
        });
        if (claimed) {
          this.spans.splice(i, 1);
          return span;
        }
      }
      return 'wait';
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
   * The queue of `stream`. For postings, windows from the first accounts window that failed for the backfill
   * on are failed at once: the customers to ask are not known. `limits.spans` spans are claimed per
   * transaction (one per lane of this process).
   */
  static async open(ctx: QueueContext, backfill: Backfill, limits: { maxDays: number; maxWindows: number; spans: number }): Promise<BackfillQueue> {
    const queue = new BackfillQueue(ctx, backfill, limits);
    if (ctx.stream === 'loyalty_postings' && backfill.streams.includes('accounts')) {
      const scope = { job: ctx.job, backfillId: backfill.backfillId, from: backfill.from, to: backfill.to };
      const failed = await ctx.destination.withConnection((conn) => firstFailedWindow(conn, { ...scope, stream: 'accounts' }));
      if (failed !== undefined) {
        queue.to = addDays(failed, -1);
        const error = `accounts of ${failed} and later are not loaded for job ${ctx.job}, so the customers to ask are not known`;
        const given = await ctx.destination.ledgerTransaction((conn) =>
          failOpenWindows(conn, ctx.destination.capabilities, { ...scope, from: failed, stream: ctx.stream, runId: ctx.runId }, error, new Date().toISOString()),
        );
        queue.skipped.push(...given.map((window) => ({ window, error })));
      }
    }
    return queue;
  }

  next(): Promise<NextSpan> {
    return this.turn.run(async () => {
      const { destination, job, stream, runId } = this.ctx;
      const scope = { job, stream, runId, backfillId: this.backfill.backfillId, from: this.backfill.from, to: this.to };
      if (this.claimed.length === 0 && this.to >= this.backfill.from) {
        this.claimed.push(...(await destination.ledgerTransaction((conn) => claimNextSpans(conn, destination.capabilities, scope, this.limits))));
      }
      const span = this.claimed.shift();
      if (span) return span;
      const counts = await destination.withConnection((conn) => backfillWindowCounts(conn, { job, backfillId: this.backfill.backfillId, from: this.backfill.from, to: this.backfill.to, streams: [stream] }));
      return counts.open === 0 ? undefined : 'wait';
    });
  }
}
