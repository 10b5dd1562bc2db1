import { DateTime } from 'luxon';
import { addDays, daysBetween, type Day } from '../plan/days.js';
import type { Window } from '../plan/windows.js';
import type { CustomerIdentity, LoyaltyApi, SourcePage } from '../source/loyalty-api.js';
import { DataNotFoundError, IncompleteListingError } from '../source/source-errors.js';
import { parseSourceTimestamp } from '../transform/timestamps.js';
import { askCustomer, type CustomerReject } from './askable-customer.js';

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
      for (let d = DateTime.fromISO(w.start, { zone: 'UTC' }); d.toISODate()! <= w.end; d = d.plus({ days: 1 })) this.windowOfDay.set(d.toISODate()!, w.start);
    }
  }

  /** The span, keeping postings from `day` on when it is earlier than the span's first day (and the job has a grid). */
  from(day: Day | undefined): SpanDays {
    if (day === undefined || !this.grid || day >= this.windows[0]!.start) return this;
    return new SpanDays(this.windows, this.timezone, this.grid, day, this.windowOfDay);
  }

  /** The window start of an instant inside the kept range: a window of the span, or before it, on the job's grid. */
  windowOf(ms: number): Day {
    const day = DateTime.fromMillis(ms, { zone: this.timezone }).toISODate()!;
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
 * Reads one customer's postings and keeps those dated in the span. Paging stops early only when every page
 * read so far was in newest-first order (checked, never assumed) and the last posting read is older than the
 * span. Every page read must report page 1's `totalCount` and hold exactly the postings that count leaves
 * for it; otherwise postings were added or removed while the listing was read, and it is read again, up to
 * `maxPasses` times (postings carry no key, and exact duplicates are real, so counts are the proof).
 * `1005 Data Not Found` on page 1 means the customer has no postings. A customer the service cannot be asked about
 * comes back `rejected` ({@link askCustomer}).
 */
export async function readCustomerPostings(
  api: LoyaltyApi,
  customer: CustomerIdentity,
  span: SpanDays,
  pageSize: number,
  maxPasses = 3,
): Promise<CustomerPostings> {
  const asked = await askCustomer(customer, `postings of ${customer.customerId}`, () => readListing(api, customer, span, pageSize, maxPasses));
  return 'answer' in asked ? asked.answer : { kept: [], pages: 0, stoppedEarly: false, readAgain: [], rejected: asked.rejected };
}

async function readListing(api: LoyaltyApi, customer: CustomerIdentity, span: SpanDays, pageSize: number, maxPasses: number): Promise<CustomerPostings> {
  const problems: string[] = [];
  for (let pass = 1; pass <= maxPasses; pass++) {
    const read = await readOnce(api, customer, span, pageSize);
    if (!('problem' in read)) return { ...read, readAgain: problems };
    problems.push(`read ${pass}: ${read.problem}`);
  }
  const label = `postings of ${customer.customerId}`;
  throw new IncompleteListingError(`${label}: the listing kept changing while it was read, ${maxPasses} times in a row (${problems.join('; ')})`, label);
}

async function readOnce(
  api: LoyaltyApi,
  customer: CustomerIdentity,
  span: SpanDays,
  pageSize: number,
): Promise<Omit<CustomerPostings, 'readAgain'> | { problem: string }> {
  const kept: CustomerPostings['kept'] = [];
  let total = 0;
  let previous = Number.POSITIVE_INFINITY;
  let ordered = true;
  for (let page = 1; ; page++) {
    let result: SourcePage;
    try {
      result = await api.postingsPage(customer, page, pageSize);
    } catch (error) {
      if (!(error instanceof DataNotFoundError)) throw error;
      if (page === 1) return { kept: [], pages: 1, stoppedEarly: false };
      return { problem: `page ${page} answered 1005 Data Not Found after page 1 listed ${total} postings` };
    }
    if (page === 1) total = result.totalCount;
    else if (result.totalCount !== total) return { problem: `totalCount went from ${total} on page 1 to ${result.totalCount} on page ${page}` };
    const expected = Math.min(pageSize, Math.max(0, total - (page - 1) * pageSize));
    if (result.data.length !== expected) return { problem: `page ${page} held ${result.data.length} postings where totalCount ${total} leaves ${expected}` };
    for (const posting of result.data) {
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
    if (page * pageSize >= total) return { kept, pages: page, stoppedEarly: false };
    if (ordered && previous < span.startMs) return { kept, pages: page, stoppedEarly: true };
  }
}
