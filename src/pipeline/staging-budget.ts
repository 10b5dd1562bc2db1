import type { Row } from '../load/table-spec.js';

/**
 * One limit on the rows a run's spans hold staged at once, shared by all of its lanes: a warehouse that keeps
 * staged rows in the process's memory (DuckDB holds them, and a transaction's inserted rows, until the commit)
 * would otherwise hold as many spans' rows as there are lanes. Before a span stages more, it takes their size
 * from the budget; what it took is given back when its staging is released (committed or aborted).
 *
 * The oldest span in flight always proceeds, whatever the budget holds: it never waits on younger spans, so the
 * run cannot deadlock, and each span becomes the oldest in turn. The others wait, oldest first, until there is
 * room; a younger span never overtakes an older one that waits (no starvation). A span that waits stops pulling
 * pages from the source: requests already made finish into the extractor's bounded buffers, and no further ones
 * are made for it until it proceeds.
 */
export class StagingBudget {
  private used = 0;
  private nextTicket = 0;
  /** Bytes held per span in flight, oldest first (a Map keeps its insertion order, and tickets only grow). */
  private readonly held = new Map<number, number>();
  /** Spans waiting for room, oldest first (each span waits for at most one take at a time). */
  private readonly waiting: Array<{ ticket: number; bytes: number; grant: () => void }> = [];

  /** @param limit bytes (estimated, see {@link stagedBytes}) all spans of the run may hold staged at once. */
  constructor(readonly limit: number) {}

  /** A span's share of the budget, from the moment it opens until {@link SpanShare.release}. */
  open(): SpanShare {
    const ticket = this.nextTicket++;
    this.held.set(ticket, 0);
    let released = false;
    return {
      take: (bytes) => this.take(ticket, bytes),
      release: () => {
        if (released) return;
        released = true;
        this.release(ticket);
      },
    };
  }

  /** Bytes the spans in flight hold now. */
  get inUse(): number {
    return this.used;
  }

  private take(ticket: number, bytes: number): Promise<void> | undefined {
    if (!this.held.has(ticket)) throw new Error('a span took from the staging budget after it was released');
    // an older span waiting for room goes first: a younger one never overtakes it
    const olderWaits = this.waiting.length > 0 && this.waiting[0]!.ticket < ticket;
    if (!olderWaits && this.fits(ticket, bytes)) {
      this.grant(ticket, bytes);
      return undefined;
    }
    return new Promise<void>((resolve) => {
      const at = this.waiting.findIndex((w) => w.ticket > ticket);
      const waiter = {
        ticket,
        bytes,
        grant: () => {
          this.grant(ticket, bytes);
          resolve();
        },
      };
      if (at < 0) this.waiting.push(waiter);
      else this.waiting.splice(at, 0, waiter);
    });
  }

  private release(ticket: number): void {
    this.used -= this.held.get(ticket) ?? 0;
    this.held.delete(ticket);
    // a span released while it waited (it cannot: it awaits its take) would otherwise hold its place for ever
    const own = this.waiting.findIndex((w) => w.ticket === ticket);
    if (own >= 0) this.waiting.splice(own, 1);
    while (this.waiting.length > 0 && this.fits(this.waiting[0]!.ticket, this.waiting[0]!.bytes))
      this.waiting.shift()!.grant();
  }

  /** The oldest span in flight proceeds whatever the budget holds; the others when their bytes fit. */
  private fits(ticket: number, bytes: number): boolean {
    return this.held.keys().next().value === ticket || this.used + bytes <= this.limit;
  }

  private grant(ticket: number, bytes: number): void {
    this.used += bytes;
    this.held.set(ticket, (this.held.get(ticket) ?? 0) + bytes);
  }
}

/** A span's share of a {@link StagingBudget}. */
export interface SpanShare {
  /** Takes `bytes` more before they are staged: undefined when granted at once, else a promise of the grant. */
  take(bytes: number): Promise<void> | undefined;
  /** Gives back everything the span took (its staging is gone); once, later calls do nothing. */
  release(): void;
}

/**
 * What rows take staged, estimated: each value as a 16-byte slot (DuckDB's string and number slots) plus its
 * text beyond 12 characters (shorter strings are kept inline), and two slots for `_seq` and `_window_start`.
 */
export function stagedBytes(rows: ReadonlyArray<{ row: Row }>): number {
  let bytes = 0;
  for (const { row } of rows) {
    bytes += 32;
    for (const key in row) {
      const value = row[key];
      bytes += typeof value === 'string' && value.length > 12 ? 16 + value.length : 16;
    }
  }
  return bytes;
}
