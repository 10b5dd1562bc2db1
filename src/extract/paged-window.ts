import type { SourcePage } from '../source/loyalty-api.js';
import { IncompleteListingError } from '../source/source-errors.js';

/** A page handed to the pipeline; `restart` says everything handed before it for this window must be dropped. */
export interface ExtractedPage {
  records: unknown[];
  restart: boolean;
  /** On a restart: what went wrong with the previous read. */
  reason?: string;
}

/** An offset-paginated listing (pages from 1) and how to read it. */
export interface PagedListing {
  /** Names the listing in errors, e.g. `accounts 2024-05-01..2024-05-01`. */
  label: string;
  pageSize: number;
  fetchPage(page: number): Promise<SourcePage>;
  /**
   * The key of a record, where the stream's records carry one (accounts: `customerId`), or undefined for a
   * record without one. A key met twice in one read means records moved between pages.
   */
  keyOf?: (record: unknown) => string | undefined;
  /** Pages requested ahead of the one being handed over (default 1); the client's cap still applies. */
  concurrency?: number;
  /** Reads of the whole listing before giving up (default 3). */
  maxPasses?: number;
}

/**
 * Reads every page of an offset-paginated listing, and proves the read complete: every page reported the
 * `totalCount` of page 1, every page held exactly the records that count leaves for it, and no key came
 * twice. Otherwise the source changed between page reads — records were skipped or repeated — and the
 * whole listing is read again (the next read's first page carries `restart`), up to `maxPasses` times, after
 * which an {@link IncompleteListingError} says what went wrong on every read.
 *
 * Page 1 is read first (it tells how many pages there are); the others are requested up to `concurrency`
 * ahead and handed over in order, so memory holds at most that many pages.
 *
 * @example
 * const pages = readAllPages({ label: 'accounts 2024-05-01..2024-05-01', pageSize: 500, fetchPage: (n) => api.accountsPage(window, n, 500) });
 * for await (const page of pages) { ... }
 */
export async function* readAllPages(listing: PagedListing): AsyncGenerator<ExtractedPage> {
  const { label, maxPasses = 3 } = listing;
  const problems: string[] = [];
  for (let pass = 1; pass <= maxPasses; pass++) {
    let handed = 0;
    let problem: string | undefined;
    for await (const step of readOnce(listing)) {
      if ('problem' in step) {
        problem = step.problem;
        break;
      }
      if (pass > 1 && handed++ === 0) yield { records: step.records, restart: true, reason: problems.at(-1)! };
      else yield { records: step.records, restart: false };
    }
    if (problem === undefined) return;
    problems.push(`read ${pass}: ${problem}`);
  }
  throw new IncompleteListingError(`${label}: the listing kept changing while it was read, ${maxPasses} times in a row (${problems.join('; ')})`, label);
}

type Step = { records: unknown[] } | { problem: string };

/** One read of the listing: its pages in order, or a problem that ends the read. */
async function* readOnce(listing: PagedListing): AsyncGenerator<Step> {
  const { pageSize, fetchPage, keyOf } = listing;
  const first = await fetchPage(1);
  const total = first.totalCount;
  const pages = Math.max(1, Math.ceil(total / pageSize));
  const ahead = new PagesAhead(fetchPage, 2, pages, Math.max(1, listing.concurrency ?? 1));
  const keys = keyOf ? new Set<string>() : undefined;
  for (let n = 1; n <= pages; n++) {
    const page = n === 1 ? first : await ahead.next();
    const problem = pageProblem(page, n, total, pages, pageSize) ?? (keys && keyOf ? repeatedKey(page.data, keys, keyOf, n) : undefined);
    if (problem) {
      yield { problem };
      return;
    }
    yield { records: page.data };
  }
}

/** Why page `n` does not fit the listing that page 1 described, or undefined when it does. */
function pageProblem(page: SourcePage, n: number, total: number, pages: number, pageSize: number): string | undefined {
  if (page.totalCount !== total) return `totalCount went from ${total} on page 1 to ${page.totalCount} on page ${n}`;
  const expected = n < pages ? pageSize : total - (pages - 1) * pageSize;
  if (page.data.length !== expected) return `page ${n} held ${page.data.length} records where totalCount ${total} leaves ${expected}`;
  return undefined;
}

function repeatedKey(records: unknown[], keys: Set<string>, keyOf: (record: unknown) => string | undefined, n: number): string | undefined {
  for (const record of records) {
    const key = keyOf(record);
    if (key === undefined) continue;
    if (keys.has(key)) return `${key} came again on page ${n}`;
    keys.add(key);
  }
  return undefined;
}

/** Requests pages `from..last` at most `ahead` at a time, handing them out in order. */
class PagesAhead {
  private readonly pending: Array<Promise<SourcePage>> = [];

  constructor(
    private readonly fetchPage: (page: number) => Promise<SourcePage>,
    private nextPage: number,
    private readonly last: number,
    private readonly ahead: number,
  ) {
    this.fill();
  }

  next(): Promise<SourcePage> {
    const page = this.pending.shift()!;
    this.fill();
    return page;
  }

  private fill(): void {
    while (this.pending.length < this.ahead && this.nextPage <= this.last) {
      const page = this.fetchPage(this.nextPage++);
      page.catch(() => undefined); // a page left behind when a read ends early must not fail unobserved
      this.pending.push(page);
    }
  }
}
