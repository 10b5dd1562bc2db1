import { DateTime } from 'luxon';
import type { Day } from '../plan/days.js';
import type { Window } from '../plan/windows.js';
import type { CustomerIdentity, LoyaltyApi } from '../source/loyalty-api.js';
import { DataNotFoundError, SourceError } from '../source/source-errors.js';
import { parseSourceTimestamp } from '../transform/timestamps.js';

/** A raw posting with the customer it was listed for, as the postings stream stages and rejects it. */
export interface PostingRecord {
  customerId: string;
  posting: unknown;
}

export interface CustomerPostings {
  kept: Array<{ windowStart: Day; record: PostingRecord }>;
  pages: number;
  /** Paging stopped before the last page, because the listing was proven newest-first past the span. */
  stoppedEarly: boolean;
}

/** The instants bounding a span, and the window of each day. */
export class SpanDays {
  readonly startMs: number;
  readonly endMs: number;
  private readonly windowOfDay = new Map<Day, Day>();

  constructor(
    readonly windows: Window[],
    readonly timezone: string,
  ) {
    this.startMs = DateTime.fromISO(windows[0]!.start, { zone: timezone }).startOf('day').toMillis();
    this.endMs = DateTime.fromISO(windows.at(-1)!.end, { zone: timezone }).plus({ days: 1 }).startOf('day').toMillis();
    for (const w of windows) {
      for (let d = DateTime.fromISO(w.start, { zone: 'UTC' }); d.toISODate()! <= w.end; d = d.plus({ days: 1 })) this.windowOfDay.set(d.toISODate()!, w.start);
    }
  }

  /** The window start of an instant inside the span. */
  windowOf(ms: number): Day {
    const day = DateTime.fromMillis(ms, { zone: this.timezone }).toISODate()!;
    return this.windowOfDay.get(day)!;
  }
}

function postingMillis(posting: unknown, timezone: string): number | undefined {
  const date = (posting as { postingDate?: unknown } | null)?.postingDate;
  if (typeof date !== 'string') return undefined;
  try {
    return Date.parse(parseSourceTimestamp(date, timezone));
  } catch {
    return undefined;
  }
}

/**
 * Reads one customer's postings and keeps those dated in the span. Paging stops early only when every page
 * read so far was in newest-first order (checked, never assumed) and the last posting read is older than the
 * span. `totalCount` must stay the same across the pages read; if it moves, the listing is read again.
 * `1005 Data Not Found` means the customer has no postings.
 */
export async function readCustomerPostings(api: LoyaltyApi, customer: CustomerIdentity, span: SpanDays, pageSize: number, maxPasses = 3): Promise<CustomerPostings> {
  for (let pass = 1; pass <= maxPasses; pass++) {
    const kept: CustomerPostings['kept'] = [];
    let total: number | undefined;
    let previous = Number.POSITIVE_INFINITY;
    let ordered = true;
    let pages = 0;
    let drift = false;
    for (let page = 1; ; page++) {
      let data: unknown[];
      try {
        const result = await api.postingsPage(customer, page, pageSize);
        if (total === undefined) total = result.totalCount;
        else if (total !== result.totalCount) drift = true;
        data = result.data;
      } catch (error) {
        if (error instanceof DataNotFoundError && page === 1) return { kept: [], pages: 1, stoppedEarly: false };
        throw error;
      }
      pages++;
      if (drift) break;
      for (const posting of data) {
        const ms = postingMillis(posting, span.timezone);
        if (ms === undefined) {
          ordered = false; // cannot be placed nor ordered: the normalizer rejects it in the span's first window
          kept.push({ windowStart: span.windows[0]!.start, record: { customerId: customer.customerId, posting } });
          continue;
        }
        if (ms > previous) ordered = false;
        previous = ms;
        if (ms >= span.startMs && ms < span.endMs) kept.push({ windowStart: span.windowOf(ms), record: { customerId: customer.customerId, posting } });
      }
      const more = data.length > 0 && page * pageSize < total!;
      if (!more) return { kept, pages, stoppedEarly: false };
      if (ordered && previous < span.startMs) return { kept, pages, stoppedEarly: true };
    }
  }
  throw new SourceError(`postings of ${customer.customerId}: the listing kept changing while it was read (${maxPasses} passes)`, 'postings');
}
