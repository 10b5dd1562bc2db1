import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Emulator, type ExportPageView, driftedView, startEmulator } from '../../src/emulator/index.js';
import { readCustomerPostings, SpanDays } from '../../src/extract/customer-postings.js';
import { readAllPages, type ExtractedPage, type PagedListing } from '../../src/extract/paged-listing.js';
import { silentLogger } from '../../src/log/logger.js';
import { HttpClient } from '../../src/source/http-client.js';
import { LoyaltyApi, type SourcePage } from '../../src/source/loyalty-api.js';
import { IncompleteListingError } from '../../src/source/source-errors.js';
import { splitSurveyElement } from '../../src/streams/surveys.js';

const TZ = 'Europe/Athens';
const DAYS = Array.from({ length: 20 }, (_, d) => `2024-09-${String(d + 1).padStart(2, '0')}`);

/** What a loader ends up with: pages appended, everything dropped on `restart`. */
async function collect(
  pages: AsyncIterable<ExtractedPage>,
): Promise<{ records: unknown[]; restarts: number; reasons: string[] }> {
  let records: unknown[] = [];
  let restarts = 0;
  const reasons: string[] = [];
  for await (const page of pages) {
    if (page.restart) {
      records = [];
      restarts++;
      reasons.push(page.reason ?? '');
    }
    records.push(...page.records);
  }
  return { records, restarts, reasons };
}

const customerIdOf = (r: unknown) => (r as { customerId?: string }).customerId;

describe('reading a listing that changes while it is paged', () => {
  let emulator: Emulator;
  let api: LoyaltyApi;
  let inFlight = 0;
  let most = 0;
  beforeAll(async () => {
    emulator = await startEmulator({
      seed: 7,
      accounts: 400,
      endDate: '2024-11-15',
      timezone: TZ,
      faults: { driftRate: 1 },
      hooks: {
        middleware: [
          async (request, next) => {
            most = Math.max(most, ++inFlight);
            try {
              await new Promise((r) => setTimeout(r, 3));
              return await next(request);
            } finally {
              inFlight--;
            }
          },
        ],
      },
    });
    api = new LoyaltyApi(
      new HttpClient({
        baseUrl: emulator.url,
        timeoutMs: 2000,
        retries: 0,
        requestsPerSecond: 10_000,
        concurrency: 4,
        logger: silentLogger,
      }),
    );
  });
  afterAll(async () => emulator.close());

  it('reads every accounts window again until it is complete and has no customer twice: equal to the truth', async () => {
    emulator.faults.set({ driftRate: 1 });
    most = 0;
    let restarts = 0;
    for (const day of DAYS) {
      const window = { start: day, end: day };
      const read = await collect(
        readAllPages({
          label: `accounts ${day}`,
          pageSize: 2,
          fetchPage: (n) => api.accountsPage(window, n, 2),
          keyOf: customerIdOf,
          concurrency: 3,
        }),
      );
      restarts += read.restarts;
      expect(read.records.map(customerIdOf), day).toEqual(
        [...emulator.truth.accounts(day, day)].map((a) => a.customer_id),
      );
    }
    expect(emulator.faults.counts().driftedReads).toBeGreaterThan(DAYS.length / 2); // every window with a second page
    expect(restarts).toBe(emulator.faults.counts().driftedReads);
    expect(most).toBeGreaterThan(1); // pages after the first were asked for ahead, at once
  });

  it('reads every surveys window again until totalCount and page lengths agree: equal to the truth', async () => {
    emulator.faults.set({ driftRate: 1 });
    for (const day of DAYS.slice(1)) {
      const window = { start: day, end: day };
      const read = await collect(
        readAllPages({
          label: `surveys ${day}`,
          pageSize: 2,
          fetchPage: (n) => api.surveysPage(window, n, 2),
          concurrency: 2,
        }),
      );
      const answers = read.records
        .flatMap(splitSurveyElement)
        .map((r) => (r as { answers: Array<{ customerId: string; date: string }> }).answers[0]!.customerId);
      expect(answers, day).toEqual([...emulator.truth.surveyResponses(day, day)].map((r) => r.customer_id));
    }
    expect(emulator.faults.counts().driftedReads).toBeGreaterThan(10);
  });

  it("reads a customer's postings again when they change between pages: equal to the truth", async () => {
    emulator.faults.set({ driftRate: 1 });
    const customers = [...emulator.truth.customers('2024-11-15')];
    const long = customers[93]!; // (index + seed % 100) % 100 === 0: hundreds of postings
    const span = new SpanDays([{ start: '2024-08-18', end: '2024-11-15' }], TZ);
    const read = await readCustomerPostings(
      api,
      { customerId: long.customer_id, phone: long.phone, email: long.email },
      span,
      50,
    );
    const truth = [...emulator.truth.postings('2024-08-18', '2024-11-15')].filter(
      (p) => p.customer_id === long.customer_id,
    );
    expect(read.kept.length).toBe(truth.length);
    expect(read.kept.map((k) => (k.record.posting as { receipt: string }).receipt).sort()).toEqual(
      truth.map((p) => p.receipt).sort(),
    );
    expect(emulator.faults.counts().driftedReads).toBe(1);
  });

  it('fails with the reason of every read when the listing never settles', async () => {
    emulator.faults.set({ driftRate: 1, driftReads: 1000 });
    const window = { start: '2024-09-03', end: '2024-09-03' };
    const failure = await collect(
      readAllPages({
        label: 'accounts 2024-09-03..2024-09-03',
        pageSize: 3,
        fetchPage: (n) => api.accountsPage(window, n, 3),
        keyOf: customerIdOf,
      }),
    ).catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(IncompleteListingError);
    expect((failure as Error).message).toMatch(
      /^accounts 2024-09-03\.\.2024-09-03: the listing kept changing while it was read, 3 times in a row \(read 1: .+; read 2: .+; read 3: .+\)$/,
    );

    const long = [...emulator.truth.customers('2024-11-15')][93]!;
    const span = new SpanDays([{ start: '2024-08-18', end: '2024-11-15' }], TZ);
    await expect(
      readCustomerPostings(api, { customerId: long.customer_id, phone: long.phone, email: long.email }, span, 50),
    ).rejects.toThrow(
      new RegExp(
        `^postings of ${long.customer_id}: the listing kept changing while it was read, 3 times in a row \\(read 1: totalCount went from`,
      ),
    );
  });
});

describe('what proves a read complete', () => {
  const records = Array.from({ length: 12 }, (_, i) => ({ customerId: `C${i}` }));
  const settled: ExportPageView = { totalCount: records.length, records: (from, to) => records.slice(from, to) };

  /** A listing whose first read of page `page` sees it changed by `kind`. */
  function listing(kind: 'insert' | 'delete' | 'move', page: number, keyed: boolean): PagedListing {
    let changed = false;
    const fetchPage = async (n: number): Promise<SourcePage> => {
      let view = settled;
      if (n === page && !changed) {
        changed = true;
        view = driftedView(settled, { kind, at: 0 });
      }
      const from = (n - 1) * 5;
      return {
        pageNumber: n,
        pageSize: 5,
        totalCount: view.totalCount,
        data: from < view.totalCount ? view.records(from, Math.min(view.totalCount, from + 5)) : [],
      };
    };
    return { label: 'test', pageSize: 5, fetchPage, keyOf: keyed ? customerIdOf : undefined };
  }

  it.each([
    ['insert', 'read 1: totalCount went from 12 on page 1 to 13 on page 2'],
    ['delete', 'read 1: totalCount went from 12 on page 1 to 11 on page 2'],
    ['move', 'read 1: C10 came again on page 3'],
  ] as const)('notices a record %s in front of a page, and reads again', async (kind, reason) => {
    const read = await collect(readAllPages(listing(kind, 2, true)));
    expect(read.records).toEqual(records);
    expect(read.restarts).toBe(1);
    expect(read.reasons).toEqual([reason]);
  });

  it('notices a move in a listing without keys: a second read of its pages holds other records', async () => {
    const unkeyed = await collect(readAllPages(listing('move', 2, false)));
    expect(unkeyed.records).toEqual(records);
    expect(unkeyed.restarts).toBe(1);
    expect(unkeyed.reasons[0]).toMatch(
      /^read 1: two reads of pages 1\.\.3 \(totalCount 12 both times\) held different records: 1 only in the first, 1 only in the second/,
    );
  });

  /** A keyless listing of `rows` served `size` a page, each page request seeing the order `orderOf(request)`. */
  function served(rows: unknown[], size: number, orderOf: (request: number) => unknown[] = () => rows) {
    let requests = 0;
    const fetchPage = async (n: number): Promise<SourcePage> => {
      const order = orderOf(requests++);
      return { pageNumber: n, pageSize: size, totalCount: order.length, data: order.slice((n - 1) * size, n * size) };
    };
    return {
      listing: { label: 'surveys 2024-09-03..2024-09-03', pageSize: size, fetchPage } satisfies PagedListing,
      requests: () => requests,
    };
  }

  it('keeps exact duplicates of a stable keyless listing, at the price of one confirming read', async () => {
    const rows = [{ a: 1 }, { a: 1 }, { a: 2 }, { a: 3 }, { a: 3 }, { a: 3 }, { a: 4 }];
    const { listing, requests } = served(rows, 3);
    const read = await collect(readAllPages(listing));
    expect(read).toEqual({ records: rows, restarts: 0, reasons: [] });
    expect(requests()).toBe(6); // 3 pages, read twice
    const single = served(rows, 10);
    expect((await collect(readAllPages(single.listing))).records).toEqual(rows);
    expect(single.requests()).toBe(1); // one page is one answer: nothing to confirm
  });

  it('fails loudly on a listing whose order changes between page requests, never handing over a read with records missing or twice', async () => {
    const rows = Array.from({ length: 9 }, (_, i) => ({ answer: i }));
    // each request sees the rows rotated: the counts hold on every page, the records do not
    const { listing } = served(rows, 3, (request) => [...rows.slice(request % 9), ...rows.slice(0, request % 9)]);
    const failure = await collect(readAllPages(listing)).catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(IncompleteListingError);
    expect((failure as Error).message).toMatch(
      /^surveys 2024-09-03\.\.2024-09-03: the listing kept changing while it was read, 3 times in a row \(read 1: two reads of pages 1\.\.3 \(totalCount 9 both times\) held different records: \d+ only in the first, \d+ only in the second \(records skipped or repeated across page boundaries: the listing's order changed between page requests\); read 2: .+; read 3: .+\)$/,
    );
  });

  it('accepts a read that agrees with the confirming read before it', async () => {
    const rows = Array.from({ length: 6 }, (_, i) => ({ answer: i }));
    const moved = [rows[0], rows[2], rows[3], rows[4], rows[5], rows[1]];
    // the first read's page 2 sees row 1 moved last (row 2 skipped, row 1 twice); every later request sees the moved order
    const { listing, requests } = served(rows, 3, (request) => (request === 0 ? rows : moved));
    const read = await collect(readAllPages(listing));
    expect(read.restarts).toBe(1);
    expect(
      [...read.records].sort((x, y) => (x as { answer: number }).answer - (y as { answer: number }).answer),
    ).toEqual(rows);
    expect(requests()).toBe(6); // read 1, its confirming read, read 2 (agreeing with that confirming read)
  });

  it('reads a keyed listing that lists a customer once per change, proven by a confirming read', async () => {
    const rows = [
      { customerId: 'C1', profileSet: '2024-09-03 08:00:00' },
      { customerId: 'C2', profileSet: '2024-09-03 09:00:00' },
      { customerId: 'C1', profileSet: '2024-09-03 10:00:00' },
      { customerId: 'C3', profileSet: '2024-09-03 11:00:00' },
    ];
    const { listing, requests } = served(rows, 2);
    const read = await collect(readAllPages({ ...listing, keyOf: customerIdOf }));
    expect(read).toEqual({ records: rows, restarts: 0, reasons: [] });
    expect(requests()).toBe(4);
  });

  it('catches a customer re-saved while its listing is paged: its key twice with other content, and another customer skipped', async () => {
    const rows = [{ customerId: 'C1', v: 1 }, { customerId: 'C2' }, { customerId: 'C3' }, { customerId: 'C4' }];
    const resaved = [rows[1], rows[2], rows[3], { customerId: 'C1', v: 2 }];
    const { listing } = served(rows, 2, (request) => (request === 0 ? rows : resaved));
    const read = await collect(readAllPages({ ...listing, keyOf: customerIdOf }));
    expect(read.restarts).toBe(1);
    expect(read.records).toEqual(resaved);
  });
});
