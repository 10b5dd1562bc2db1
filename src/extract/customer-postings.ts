import { DateTime } from 'luxon';
import { addDays, dayOfMillis, daysBetween, type Day } from '../plan/days.js';
import type { Window } from '../plan/windows.js';
import type { CustomerIdentity, LoyaltyApi } from '../source/loyalty-api.js';
import { parseSourceTimestamp } from '../transform/timestamps.js';
import { askCustomer, type CustomerReject } from './askable-customer.js';
import { readAllPages } from './paged-listing.js';

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
  /** Why earlier reads of the listing were dropped (it changed while it was read); empty when the first read held. */
  readAgain: string[];
  /** The service cannot be asked about this customer (no phone nor e-mail, or `1010`): nothing was kept. */
  rejected?: CustomerReject;
}

/** How the job's windows are laid: `windowDays` days each, aligned on `firstDay` (see `planWindows`). */
export interface WindowGrid {
  firstDay: Day;
  windowDays: number;
}

/**
 * The instants bounding a span, and the window of each day. A customer the sweep asks keeps its postings from
 * an earlier day ({@link SpanDays.from}): those dated before the span go to their windows on the job's grid.
 */
export class SpanDays {
  readonly startMs: number;
  readonly endMs: number;
  private readonly windowOfDay: Map<Day, Day>;

  constructor(
    readonly windows: Window[],
    readonly timezone: string,
    private readonly grid?: WindowGrid,
    startDay: Day = windows[0]!.start,
    windowOfDay?: Map<Day, Day>,
  ) {
    this.startMs = DateTime.fromISO(startDay, { zone: timezone }).startOf('day').toMillis();
    this.endMs = DateTime.fromISO(windows.at(-1)!.end, { zone: timezone }).plus({ days: 1 }).startOf('day').toMillis();
    if (windowOfDay) {
      this.windowOfDay = windowOfDay;
      return;
    }
    this.windowOfDay = new Map();
    for (const w of windows) {
      for (let d = DateTime.fromISO(w.start, { zone: 'UTC' }); d.toISODate()! <= w.end; d = d.plus({ days: 1 }))
        this.windowOfDay.set(d.toISODate()!, w.start);
    }
  }

  /** The span, keeping postings from `day` on when it is earlier than the span's first day (and the job has a grid). */
  from(day: Day | undefined): SpanDays {
    if (day === undefined || !this.grid || day >= this.windows[0]!.start) return this;
    return new SpanDays(this.windows, this.timezone, this.grid, day, this.windowOfDay);
  }

  /** The window start of an instant inside the kept range: a window of the span, or before it, on the job's grid. */
  windowOf(ms: number): Day {
    const day = dayOfMillis(ms, this.timezone);
    const inSpan = this.windowOfDay.get(day);
    if (inSpan !== undefined || !this.grid) return inSpan!;
    const { firstDay, windowDays } = this.grid;
    return addDays(firstDay, Math.floor(daysBetween(firstDay, day) / windowDays) * windowDays);
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
 * Whether a customer's listing, read page by page newest first, has gone past the span: true once every posting
 * read so far came in newest-first order (checked, never assumed) and the last one is older than the span.
 */
class PastTheSpan {
  stopped = false;
  private previous = Number.POSITIVE_INFINITY;
  private ordered = true;

  constructor(private readonly span: SpanDays) {}

  enough(postings: unknown[]): boolean {
    for (const posting of postings) {
      const ms = postingMillis(posting, this.span.timezone);
      if (ms === undefined || ms > this.previous) this.ordered = false;
      if (ms !== undefined) this.previous = ms;
    }
    this.stopped = this.ordered && this.previous < this.span.startMs;
    return this.stopped;
  }
}

/**
 * Reads one customer's postings through the one paging proof ({@link readAllPages}: postings carry no key, so
 * a listing of more than one page is confirmed by a second read) and keeps those dated in the span. Paging stops
 * early only when the listing is proven newest-first past the span ({@link PastTheSpan}). `1005 Data Not Found`
 * on page 1 means the customer has no postings. A customer the service cannot be asked about comes back
 * `rejected` ({@link askCustomer}).
 */
export async function readCustomerPostings(
  api: LoyaltyApi,
  customer: CustomerIdentity,
  span: SpanDays,
  pageSize: number,
  maxPasses = 3,
): Promise<CustomerPostings> {
  const asked = await askCustomer(customer, `postings of ${customer.customerId}`, () =>
    readListing(api, customer, span, pageSize, maxPasses),
  );
  return 'answer' in asked
    ? asked.answer
    : { kept: [], pages: 0, stoppedEarly: false, readAgain: [], rejected: asked.rejected };
}

async function readListing(
  api: LoyaltyApi,
  customer: CustomerIdentity,
  span: SpanDays,
  pageSize: number,
  maxPasses: number,
): Promise<CustomerPostings> {
  let past: PastTheSpan | undefined;
  const pages = readAllPages({
    label: `postings of ${customer.customerId}`,
    pageSize,
    fetchPage: (n) => api.postingsPage(customer, n, pageSize),
    maxPasses,
    notFoundIsEmpty: true,
    stopRule: () => {
      const rule = (past = new PastTheSpan(span));
      return (postings) => rule.enough(postings);
    },
  });
  const result: CustomerPostings = { kept: [], pages: 0, stoppedEarly: false, readAgain: [] };
  for await (const page of pages) {
    if (page.restart) {
      result.kept = [];
      result.pages = 0;
      result.readAgain.push(page.reason ?? '');
    }
    result.pages++;
    for (const posting of page.records) {
      const record = { customerId: customer.customerId, posting };
      const ms = postingMillis(posting, span.timezone);
      // a posting that cannot be placed is kept under the span's first window, where the normalizer rejects it
      if (ms === undefined) result.kept.push({ windowStart: span.windows[0]!.start, record });
      else if (ms >= span.startMs && ms < span.endMs) result.kept.push({ windowStart: span.windowOf(ms), record });
    }
  }
  result.stoppedEarly = past?.stopped ?? false;
  return result;
}
