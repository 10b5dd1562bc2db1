import type { StreamName } from '../plan/job-plan.js';

/** How far the per-customer spans of one stream under way have come, summed over its lanes. */
export interface CustomersAsked {
  /** Customers handed on to be asked so far: a request is on its way for each, or has been answered. */
  asked: number;
  /** Customers the spans selected. */
  selected: number;
}

/** Tells how far a stream's per-customer spans have come; `undefined` once none of the stream's spans is under way. */
export type CustomersAskedListener = (stream: StreamName, progress: CustomersAsked | undefined) => void;

/** One span's share of its stream's tally. */
export interface SpanCustomers {
  /** The span selected `selected` customers and has handed on `asked` of them. */
  report(asked: number, selected: number): void;
  /** The span ended, loaded or not: its customers leave the tally. */
  close(): void;
}

/**
 * The customers asked by the per-customer spans under way, per stream: lanes of the same stream add up, so the
 * progress display shows one figure per stream however many spans run at once.
 */
export class CustomerTally {
  private readonly spans = new Map<StreamName, Set<CustomersAsked>>();

  constructor(private readonly listener: CustomersAskedListener | undefined) {}

  /** A span of `stream` starts: what it reports counts until it closes. */
  open(stream: StreamName): SpanCustomers {
    const mine: CustomersAsked = { asked: 0, selected: 0 };
    let spans = this.spans.get(stream);
    if (!spans) this.spans.set(stream, (spans = new Set()));
    spans.add(mine);
    return {
      report: (asked, selected) => {
        mine.asked = asked;
        mine.selected = selected;
        this.tell(stream);
      },
      close: () => {
        if (!spans.delete(mine)) return;
        if (spans.size === 0) this.spans.delete(stream);
        this.tell(stream);
      },
    };
  }

  private tell(stream: StreamName): void {
    const spans = this.spans.get(stream);
    if (!spans) return this.listener?.(stream, undefined);
    let asked = 0;
    let selected = 0;
    for (const s of spans) {
      asked += s.asked;
      selected += s.selected;
    }
    this.listener?.(stream, { asked, selected });
  }
}

/** `customers`, telling `report` how many were selected at once, and how many were handed on after each one is. */
export function countedCustomers<T>(
  customers: AsyncIterable<T>,
  selected: number,
  report: (asked: number, selected: number) => void,
): AsyncIterable<T> {
  report(0, selected);
  return (async function* () {
    let asked = 0;
    for await (const customer of customers) {
      report(++asked, selected);
      yield customer;
    }
  })();
}
