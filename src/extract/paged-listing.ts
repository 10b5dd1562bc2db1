import { hash } from 'node:crypto';
import type { SourcePage } from '../source/loyalty-api.js';
import { DataNotFoundError, IncompleteListingError } from '../source/source-errors.js';

/** A page handed to the pipeline; `restart` says everything handed before it for this listing must be dropped. */
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
   * record without one. A key met twice in one read means records moved between pages. Without it the listing
   * is keyless (surveys, postings), and a read of more than one page is confirmed by a second read.
   */
  keyOf?: (record: unknown) => string | undefined;
  /** Pages requested ahead of the one being handed over (default 1); the client's cap still applies. */
  concurrency?: number;
  /** Reads of the whole listing handed over before giving up (default 3). */
  maxPasses?: number;
  /** `1005 Data Not Found` on the first page means an empty listing (postings); on a later page it is a change. */
  notFoundIsEmpty?: boolean;
  /**
   * For a listing that may be read in part (postings newest first): made afresh for every read, told each page's
   * records in order, true when no further page is needed. Pages are then requested one at a time.
   */
  stopRule?: () => (records: unknown[]) => boolean;
}

/**
 * Reads the pages of an offset-paginated listing, and proves the read of pages 1..k (k the last page, or the
 * page the `stopRule` stopped at) complete and free of repeats:
 *
 * 1. every page reported the `totalCount` of page 1: the listing kept its size while it was read;
 * 2. every page held exactly the records that count leaves for it: no page cut short or padded (a page size the
 *    source caps without saying shows here);
 * 3. a keyed listing: no record came twice. With (1) and (2), a repeat is also a miss: a record moved. A key
 *    that comes again with other content may be the listing's own way (an export listing a customer once per
 *    change): the read is then proven as a keyless one, by (4);
 * 4. a keyless listing of more than one page: two reads of pages 1..k, each holding (1) and (2), hold the same
 *    records, compared as multisets of content fingerprints (exact duplicates are real records, so a repeat
 *    alone proves nothing). Offset paging skips or repeats a record only when positions change between two page
 *    requests, and such a change — a record moved, a listing order that is not stable — leaves the two reads
 *    unequal unless both skipped and repeated the very same records. The confirming read is the price of a
 *    listing without keys; a one-page listing is a single answer of the service and needs none.
 *
 * A read that fails (1)–(3), or two reads that disagree, is a listing that changed while it was read: the
 * whole listing is read again (the next read's first page carries `restart`); a read that agrees with the
 * confirming read before it needs no new one. After `maxPasses` reads an {@link IncompleteListingError} says
 * what went wrong on every read.
 *
 * Page 1 is read first (it tells how many pages there are); the others are requested up to `concurrency` ahead
 * and handed over in order, so memory holds at most that many pages (and a keyless read the fingerprints).
 *
 * @example
 * const pages = readAllPages({ label: 'accounts 2024-05-01..2024-05-01', pageSize: 500, fetchPage: (n) => api.accountsPage(window, n, 500) });
 * for await (const page of pages) { ... }
 */
export async function* readAllPages(listing: PagedListing): AsyncGenerator<ExtractedPage> {
  const { label, maxPasses = 3 } = listing;
  const problems: string[] = [];
  /** The last read of a keyless listing that held (1) and (2) but was not handed over: what the next read must match. */
  let confirmed: ListingRead | undefined;
  for (let pass = 1; pass <= maxPasses; pass++) {
    const read = new ListingRead(listing);
    let handed = 0;
    for await (const records of read.pages()) {
      if (pass > 1 && handed++ === 0) yield { records, restart: true, reason: problems.at(-1)! };
      else yield { records, restart: false };
    }
    if (read.problem !== undefined) {
      problems.push(`read ${pass}: ${read.problem}`);
      confirmed = undefined;
      continue;
    }
    if (!read.needsConfirming) return;
    if (confirmed && read.differenceFrom(confirmed) === undefined) return;
    const second = new ListingRead(listing, read.pagesRead);
    for await (const _ of second.pages()); // fingerprints only: nothing is handed over
    const problem = second.problem ?? read.differenceFrom(second);
    if (problem === undefined) return;
    problems.push(`read ${pass}: ${problem}`);
    confirmed = second.problem === undefined ? second : undefined;
  }
  throw new IncompleteListingError(
    `${label}: the listing kept changing while it was read, ${maxPasses} times in a row (${problems.join('; ')})`,
    label,
  );
}

/**
 * One read of a listing: its pages in order, checked against (1)–(3) as they come, with the fingerprints of a
 * keyless listing's records. A problem ends the read (`problem` says what it was).
 */
class ListingRead {
  problem: string | undefined;
  pagesRead = 0;
  private total = 0;
  /** Key → fingerprint of the record that carried it, for a keyed listing. */
  private readonly keys: Map<string, string> | undefined;
  /** A key came again with other content: the read is proven as a keyless one. */
  private keyRepeated = false;
  /** Content fingerprint → times read. */
  private readonly contents = new Map<string, number>();

  constructor(
    private readonly listing: PagedListing,
    /** For a confirming read: exactly these pages, whatever the stop rule said. */
    private readonly pagesToRead?: number,
  ) {
    this.keys = listing.keyOf ? new Map() : undefined;
  }

  /** A keyless read of more than one page is proven by a second read (4). */
  get needsConfirming(): boolean {
    return (this.keys === undefined || this.keyRepeated) && this.pagesRead > 1;
  }

  async *pages(): AsyncGenerator<unknown[]> {
    const { pageSize, stopRule } = this.listing;
    const first = await this.fetch(1);
    if (first === undefined) {
      this.pagesRead = 1;
      yield [];
      return;
    }
    this.total = first.totalCount;
    const pages = Math.max(1, Math.ceil(this.total / pageSize));
    const last = this.pagesToRead === undefined ? pages : Math.min(pages, this.pagesToRead);
    const enough = this.pagesToRead === undefined ? stopRule?.() : undefined;
    // a read that may stop early asks one page at a time: a page asked ahead would be a request spent for nothing
    const ahead =
      enough || this.pagesToRead !== undefined
        ? undefined
        : new PagesAhead((n) => this.fetch(n), 2, last, Math.max(1, this.listing.concurrency ?? 1));
    for (let n = 1; n <= last; n++) {
      const page = n === 1 ? first : ahead ? await ahead.next() : await this.fetch(n);
      if (page === undefined) {
        this.problem = `page ${n} answered 1005 Data Not Found after page 1 listed ${this.total} records`;
        return;
      }
      this.problem = this.check(page, n, pages);
      if (this.problem !== undefined) return;
      this.pagesRead = n;
      yield page.data;
      if (n < last && enough?.(page.data)) return;
    }
    if (this.pagesToRead !== undefined && last < this.pagesToRead)
      this.problem = `the second read found ${last} pages where the first read ${this.pagesToRead}`;
  }

  /** Page `n`, or undefined for `1005 Data Not Found` where the listing says it means "no records". */
  private async fetch(n: number): Promise<SourcePage | undefined> {
    try {
      return await this.listing.fetchPage(n);
    } catch (error) {
      if (this.listing.notFoundIsEmpty && error instanceof DataNotFoundError) return undefined;
      throw error;
    }
  }

  /** Why page `n` breaks (1)–(3), or undefined when it does not; the page's records are fingerprinted. */
  private check(page: SourcePage, n: number, pages: number): string | undefined {
    const { pageSize, keyOf } = this.listing;
    if (page.totalCount !== this.total)
      return `totalCount went from ${this.total} on page 1 to ${page.totalCount} on page ${n}`;
    const expected = n < pages ? pageSize : this.total - (pages - 1) * pageSize;
    if (page.data.length !== expected)
      return `page ${n} held ${page.data.length} records where totalCount ${this.total} leaves ${expected}`;
    for (const record of page.data) {
      const print = fingerprint(record);
      this.contents.set(print, (this.contents.get(print) ?? 0) + 1);
      const key = keyOf?.(record);
      if (!this.keys || key === undefined) continue;
      const before = this.keys.get(key);
      if (before === print) return `${key} came again on page ${n}`;
      if (before !== undefined) this.keyRepeated = true;
      this.keys.set(key, print);
    }
    return undefined;
  }

  /** How this read's records differ from `other`'s, as multisets, or undefined when they are the same. */
  differenceFrom(other: ListingRead): string | undefined {
    if (other.total !== this.total)
      return `totalCount went from ${this.total} to ${other.total} between two reads of ${this.pagesRead} pages`;
    let onlyHere = 0;
    let onlyThere = 0;
    for (const [print, n] of this.contents) onlyHere += Math.max(0, n - (other.contents.get(print) ?? 0));
    for (const [print, n] of other.contents) onlyThere += Math.max(0, n - (this.contents.get(print) ?? 0));
    if (onlyHere === 0 && onlyThere === 0) return undefined;
    return (
      `two reads of pages 1..${this.pagesRead} (totalCount ${this.total} both times) held different records: ${onlyHere} only in the first, ` +
      `${onlyThere} only in the second (records skipped or repeated across page boundaries: the listing's order changed between page requests)`
    );
  }
}

/** A record's content, as a short digest: records of one listing serialize alike (the same members in the same order). */
function fingerprint(record: unknown): string {
  // the one-shot hash: a third of the CPU of a Hash object per record, the same digest
  return hash('sha1', JSON.stringify(record) ?? 'undefined', 'base64');
}

/** Requests pages `from..last` at most `ahead` at a time, handing them out in order. */
class PagesAhead {
  private readonly pending: Array<Promise<SourcePage | undefined>> = [];

  constructor(
    private readonly fetchPage: (page: number) => Promise<SourcePage | undefined>,
    private nextPage: number,
    private readonly last: number,
    private readonly ahead: number,
  ) {
    this.fill();
  }

  next(): Promise<SourcePage | undefined> {
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
