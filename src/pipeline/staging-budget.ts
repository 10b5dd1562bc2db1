import type { Row } from '../load/table-spec.js';

/**
 * One limit on the rows a run's spans hold staged at once, shared by all of its lanes: a warehouse that keeps
 * staged rows in the process's memory (DuckDB holds them, and a transaction's inserted rows, until the commit)
 * would otherwise hold as many spans' rows as there are lanes. A span counts what it stages; before it reads its
 * next page it waits for room; what it staged is given back when its staging is released (committed or aborted).
 *
 * The oldest span still reading always reads on, whatever the budget holds: it never waits on younger spans, so
 * the run cannot deadlock, and each span becomes the oldest in turn; a span that has read all its pages hands
 * that place on while it commits, so the source is asked during commits too. The others read on while the spans in flight
 * hold less than the limit, and wait, oldest first, when they hold more; a younger span never overtakes an older
 * one that waits (no starvation). A span that waits asks the source nothing more and holds no rows of its own in
 * JavaScript: only the pages its listing had already asked ahead. So the spans hold at most the limit, the oldest
 * span's rows and one page's rows of each of the others.
 */
export class StagingBudget {
  private used = 0;
  private nextTicket = 0;
  /** The spans in flight still reading their pages, oldest first. */
  private readonly reading = new Set<number>();
  /** Spans waiting for room, oldest first (a span waits for one thing at a time: its next page). */
  private readonly waiting: Array<{ ticket: number; go: () => void }> = [];

  /** @param limit bytes (estimated, see {@link stagedBytes}) the spans of the run may hold staged at once. */
  constructor(readonly limit: number) {}

  /** A span's share of the budget, from the moment it opens until {@link SpanShare.release}. */
  open(): SpanShare {
    const ticket = this.nextTicket++;
    this.reading.add(ticket);
    let released = false;
    const share: SpanShare = {
      staged: 0,
      waitedMs: 0,
      add: (bytes) => {
        if (released) throw new Error('a span staged rows after its share of the staging budget was released');
        share.staged += bytes;
        this.used += bytes;
      },
      room: () => {
        const wait = this.room(ticket);
        if (!wait) return undefined;
        const since = performance.now();
        return wait.then(() => void (share.waitedMs += performance.now() - since));
      },
      readAll: () => {
        this.reading.delete(ticket);
        this.wake();
      },
      release: () => {
        if (released) return;
        released = true;
        this.release(ticket, share.staged);
      },
    };
    return share;
  }

  /** Bytes the spans in flight hold now. */
  get inUse(): number {
    return this.used;
  }

  private room(ticket: number): Promise<void> | undefined {
    // an older span waiting for room goes first: a younger one never overtakes it
    const olderWaits = this.waiting.length > 0 && this.waiting[0]!.ticket < ticket;
    if (!olderWaits && this.mayRead(ticket)) return undefined;
    return new Promise<void>((go) => {
      const at = this.waiting.findIndex((w) => w.ticket > ticket);
      if (at < 0) this.waiting.push({ ticket, go });
      else this.waiting.splice(at, 0, { ticket, go });
    });
  }

  private release(ticket: number, staged: number): void {
    this.used -= staged;
    this.reading.delete(ticket);
    this.wake();
  }

  private wake(): void {
    while (this.waiting.length > 0 && this.mayRead(this.waiting[0]!.ticket)) this.waiting.shift()!.go();
  }

  /**
   * The oldest span still reading reads on whatever the budget holds (a span that has read all its pages only
   * commits, which the budget never holds up, so the next one reads meanwhile: the source is not left idle
   * during a commit); the others while the spans in flight hold less than the limit.
   */
  private mayRead(ticket: number): boolean {
    return this.reading.values().next().value === ticket || this.used < this.limit;
  }
}

/** A span's share of a {@link StagingBudget}. */
export interface SpanShare {
  /** Bytes the span staged so far. */
  staged: number;
  /** How long the span waited for room so far. */
  waitedMs: number;
  /** Counts `bytes` more staged by the span. */
  add(bytes: number): void;
  /** Undefined when the span may read its next page now, else a promise that it may. */
  room(): Promise<void> | undefined;
  /** The span has read all its pages (it commits next): the next span in age reads on in its place. */
  readAll(): void;
  /** Gives back everything the span staged (its staging is gone); once, later calls do nothing. */
  release(): void;
}

/** Rows of a batch beyond which {@link stagedBytes} reads every {@link SAMPLE_EVERY}th row only. */
const SAMPLED_ABOVE = 64;
const SAMPLE_EVERY = 8;

/**
 * What rows take staged, estimated: each value as a 16-byte slot (DuckDB's string and number slots) plus its
 * text beyond 12 characters (shorter strings are kept inline), and two slots for `_seq` and `_window_start`. A
 * batch of many rows is estimated from every eighth of them: the rows of a page are alike, and reading every
 * value of every row would add per-value work to the pipeline's busiest thread.
 */
export function stagedBytes(rows: ReadonlyArray<{ row: Row }>): number {
  const step = rows.length > SAMPLED_ABOVE ? SAMPLE_EVERY : 1;
  let bytes = 0;
  let read = 0;
  for (let i = 0; i < rows.length; i += step, read++) {
    const row = rows[i]!.row;
    bytes += 32;
    for (const key in row) {
      const value = row[key];
      bytes += typeof value === 'string' && value.length > 12 ? 16 + value.length : 16;
    }
  }
  return read === 0 ? 0 : Math.round((bytes * rows.length) / read);
}
