import { DateTime } from 'luxon';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readingOptions } from '../../src/commands/emulator.js';
import {
  DEFAULT_READINGS,
  INTEREST_OPTIONS,
  type Emulator,
  type EmulatorReadings,
  UNLISTED_FIELDS,
  parseReadings,
  resolveReadings,
  unlistedMembers,
} from '../../src/emulator/index.js';
import { FIRST_DAY, LAST_DAY, ZONE, allPages, call, readTimestamp, start } from './emulator-fixture.js';

// Emulators on the fixture's dataset (300 customers, 2024-08-18..2024-11-15, Athens) with a fixed clock.
const CLOCK = Date.parse('2024-11-16T12:00:00Z');
const WINDOW = ['2024-10-20', '2024-10-31'] as const; // holds the Athens clock change of 2024-10-27
const started: Emulator[] = [];
const open = async (readings: EmulatorReadings, extra: Parameters<typeof start>[0] = {}): Promise<Emulator> => {
  const emulator = await start({ clock: () => CLOCK, readings, ...extra });
  started.push(emulator);
  return emulator;
};
afterAll(() => Promise.all(started.map((e) => e.close())));

/** Every record of a window, paged with page numbers from `first`. */
async function pages(
  emulator: Emulator,
  stream: 'accounts' | 'surveys',
  startDay: string,
  end: string,
  size = 40,
  first = 1,
): Promise<any[]> {
  const records: any[] = [];
  for (let page = first; ; page++) {
    const { status, body } = await call(
      emulator,
      `/business-data/${stream}?start=${startDay}&end=${end}&page=${page}&size=${size}`,
    );
    expect(status).toBe(200);
    if (body.data.length === 0) return records;
    records.push(...body.data);
  }
}

const phoneOf = (emulator: Emulator, n = 0) =>
  [...emulator.truth.customers(LAST_DAY)].filter((c) => c.phone)[n]!.phone!;

/** A customer with at least `min` postings. */
function busyPhone(emulator: Emulator, min: number): string {
  const counts = new Map<string, number>();
  for (const p of emulator.truth.postings(FIRST_DAY, LAST_DAY))
    counts.set(p.customer_id, (counts.get(p.customer_id) ?? 0) + 1);
  const customer = [...emulator.truth.customers(LAST_DAY)].find(
    (c) => c.phone && (counts.get(c.customer_id) ?? 0) >= min,
  )!;
  return customer.phone!;
}

describe('readings of the open conventions', () => {
  let plain: Emulator;
  beforeAll(async () => {
    plain = await open({});
  });

  it('resolves to today’s behaviour by default and names a bad reading', () => {
    expect(resolveReadings()).toEqual(DEFAULT_READINGS);
    expect(plain.options.readings).toEqual(DEFAULT_READINGS);
    expect(() => resolveReadings({ errorStatus: 302 as never })).toThrow(/errorStatus must be one of/);
    expect(() => resolveReadings({ pageSizeCap: 0 })).toThrow(/pageSizeCap/);
    expect(
      parseReadings(['errorStatus=200', 'errorBody=nested', 'pageSizeCap=25', 'unlistedFields=true', 'firstPage=0']),
    ).toEqual({
      errorStatus: 200,
      errorBody: 'nested',
      pageSizeCap: 25,
      unlistedFields: true,
      firstPage: 0,
    });
    expect(() => readingOptions(['exportEnd=maybe'])).toThrow(/--reading: readings.exportEnd must be one of/);
    expect(() => readingOptions(['colour=blue'])).toThrow(/unknown reading "colour"/);
    expect(() => readingOptions(['errorStatus'])).toThrow(/not key=value/);
  });

  it('keeps the ground truth whatever the readings', async () => {
    const every = await open({
      errorStatus: 200,
      errorBody: 'text',
      exportEnd: 'exclusive',
      accountsListing: 'per-change',
      firstPage: 0,
      pageSizeCap: 10,
      scalars: 'strings',
      zoneLabels: 'abbreviations',
      unlistedFields: true,
      listingOrder: 'unstable',
      fieldNames: 'sample',
      choiceLists: 'labels',
    });
    const [from, to] = WINDOW;
    expect([...every.truth.accounts(from, to)]).toEqual([...plain.truth.accounts(from, to)]);
    expect([...every.truth.surveyResponses(from, to)]).toEqual([...plain.truth.surveyResponses(from, to)]);
    expect([...every.truth.postings(from, to)]).toEqual([...plain.truth.postings(from, to)]);
    expect([...every.truth.loyaltyStatus()]).toEqual([...plain.truth.loyaltyStatus()]);
    expect([...every.truth.vouchers()]).toEqual([...plain.truth.vouchers()]);
    // and the truth served over HTTP too
    const truthText = (e: Emulator) =>
      fetch(`${e.url}/_emulator/truth/accounts?start=${from}&end=${to}`).then((r) => r.text());
    expect(await truthText(every)).toBe(await truthText(plain));
  });

  describe('errors', () => {
    const unknown = '/accounts/loyalty/postings?phone=300000000000&pageSize=10&pageNumber=1';
    it.each([
      [{}, 404, 'application/json', { code: 1005, message: 'Data Not Found' }],
      [
        { errorStatus: 200, errorBody: 'nested' },
        200,
        'application/json',
        { error: { code: 1005, message: 'Data Not Found' } },
      ],
      [
        { errorStatus: 500, errorBody: 'status-fields' },
        500,
        'application/json',
        { status: 'error', errorCode: '1005', errorMessage: 'Data Not Found' },
      ],
      [{ errorStatus: 400, errorBody: 'text' }, 400, 'text/plain', '1005 Data Not Found'],
    ] as const)('%o: 1005 answered %i', async (readings, status, type, body) => {
      const emulator = await open(readings as EmulatorReadings);
      const response = await fetch(`${emulator.url}${unknown}`);
      expect(response.status).toBe(status);
      expect(response.headers.get('content-type')).toContain(type);
      const text = await response.text();
      expect(type === 'text/plain' ? text : JSON.parse(text)).toEqual(body);
    });

    it('sends HTTP errors in the body shape with their own status, and 1xxx codes with the one status', async () => {
      const emulator = await open({ errorStatus: 200, errorBody: 'status-fields' });
      expect(await call(emulator, '/business-data/accounts?start=2024-09-02&end=2024-09-01&page=1&size=10')).toEqual({
        status: 400,
        body: { status: 'error', errorCode: '400', errorMessage: 'start 2024-09-02 is after end 2024-09-01' },
      });
      expect(await call(emulator, '/accounts/vouchers/get')).toEqual({
        status: 200,
        body: {
          status: 'error',
          errorCode: '1010',
          errorMessage: 'At least one of the following fields is required: phone, email',
        },
      });
    });
  });

  it('exportEnd exclusive: the end day is left out, and start = end is empty', async () => {
    const emulator = await open({ exportEnd: 'exclusive' });
    for (const stream of ['accounts', 'surveys'] as const) {
      expect(await pages(emulator, stream, '2024-10-20', '2024-10-23')).toEqual(
        await pages(plain, stream, '2024-10-20', '2024-10-22'),
      );
      const { body } = await call(emulator, `/business-data/${stream}?start=2024-10-20&end=2024-10-20&page=1&size=10`);
      expect(body).toEqual({ pageNumber: 1, pageSize: 10, totalCount: 0, data: [] });
    }
  });

  describe('accountsListing', () => {
    const [from, to] = WINDOW;
    const endMs = DateTime.fromISO(to, { zone: ZONE }).plus({ days: 1 }).toMillis();
    const startMs = DateTime.fromISO(from, { zone: ZONE }).toMillis();

    it('per-change: one record per change in the window, each as of that change', async () => {
      const emulator = await open({ accountsListing: 'per-change' });
      const lastChange = await pages(plain, 'accounts', from, to);
      const perChange = await pages(emulator, 'accounts', from, to);
      expect(perChange.length).toBeGreaterThan(lastChange.length);
      const key = (r: any) => `${r.customerId} ${r.profileSet}`;
      expect(new Set(perChange.map(key)).size).toBe(perChange.length);
      for (const record of perChange) {
        const at = Date.parse(readTimestamp(record.profileSet)!);
        expect(at >= startMs && at < endMs).toBe(true);
      }
      // the last change of each customer is served exactly as the default listing serves it
      const served = new Set(perChange.map((r) => JSON.stringify(r)));
      for (const record of lastChange) expect(served.has(JSON.stringify(record))).toBe(true);
      expect(new Set(perChange.map((r) => r.customerId))).toEqual(new Set(lastChange.map((r) => r.customerId)));
    });

    it('current: the same customers, each with its current profile and profileSet, even after the window', async () => {
      const emulator = await open({ accountsListing: 'current' });
      const lastChange = await pages(plain, 'accounts', from, to);
      const current = await pages(emulator, 'accounts', from, to);
      expect(current.map((r) => r.customerId)).toEqual(lastChange.map((r) => r.customerId));
      const latest = new Map([...plain.truth.accounts(FIRST_DAY, LAST_DAY)].map((a) => [a.customer_id, a]));
      let after = 0;
      for (const record of current) {
        const set = readTimestamp(record.profileSet)!;
        expect(set).toBe(latest.get(record.customerId)!.profile_set_at);
        if (Date.parse(set) >= endMs) after++;
      }
      expect(after).toBeGreaterThan(0);
    });
  });

  it('firstPage 0: every listing numbers its pages from 0, and -1 is a bad request', async () => {
    const emulator = await open({ firstPage: 0 });
    expect(await pages(emulator, 'accounts', ...WINDOW, 30, 0)).toEqual(
      await pages(plain, 'accounts', ...WINDOW, 30, 1),
    );
    const phone = busyPhone(plain, 12);
    const zero = await call(emulator, `/accounts/loyalty/postings?phone=${phone}&pageSize=5&pageNumber=0`);
    const one = await call(plain, `/accounts/loyalty/postings?phone=${phone}&pageSize=5&pageNumber=1`);
    expect(zero.body).toEqual({ ...one.body, pageNumber: 0 });
    const second = await call(emulator, `/accounts/loyalty/postings?phone=${phone}&pageSize=5&pageNumber=1`);
    expect(second.body.data).toEqual(
      (await call(plain, `/accounts/loyalty/postings?phone=${phone}&pageSize=5&pageNumber=2`)).body.data,
    );
    expect((await call(emulator, '/accounts/search?businessFieldsRequired=&page=0&size=3')).body.data).toEqual(
      (await call(plain, '/accounts/search?businessFieldsRequired=&page=1&size=3')).body.data,
    );
    expect(
      (await call(emulator, `/business-data/accounts?start=${WINDOW[0]}&end=${WINDOW[1]}&page=-1&size=10`)).status,
    ).toBe(400);
  });

  it('pageSizeCap: a larger size is served the cap, and pageSize says so', async () => {
    const emulator = await open({ pageSizeCap: 7 }, { maxPageSize: 50 });
    const { body } = await call(
      emulator,
      `/business-data/accounts?start=${WINDOW[0]}&end=${WINDOW[1]}&page=2&size=5000`,
    );
    expect(body.pageSize).toBe(7);
    expect(body.data).toEqual(
      (await call(plain, `/business-data/accounts?start=${WINDOW[0]}&end=${WINDOW[1]}&page=2&size=7`)).body.data,
    );
    expect(
      (await call(emulator, `/business-data/accounts?start=${WINDOW[0]}&end=${WINDOW[1]}&page=1&size=5`)).body.data,
    ).toHaveLength(5);
  });

  it('scalars strings: every number and boolean of a record is a string of the same value', async () => {
    const emulator = await open({ scalars: 'strings' });
    const phone = busyPhone(plain, 3);
    const typed = (path: string) => call(plain, path).then((r) => r.body);
    const strings = (path: string) => call(emulator, path).then((r) => r.body);
    const stringify = (value: unknown): unknown =>
      typeof value === 'number' || typeof value === 'boolean'
        ? String(value)
        : Array.isArray(value)
          ? value.map(stringify)
          : value && typeof value === 'object'
            ? Object.fromEntries(Object.entries(value).map(([k, v]) => [k, stringify(v)]))
            : value;
    const postings = `/accounts/loyalty/postings?phone=${phone}&pageSize=50&pageNumber=1`;
    const [a, b] = [await typed(postings), await strings(postings)];
    expect(b).toEqual({ ...a, data: stringify(a.data) });
    expect(typeof b.totalCount).toBe('number'); // the page envelope stays typed
    expect(b.data[0].credit).toMatch(/^-?\d+(\.\d+)?$/);
    for (const path of [
      `/accounts?phone=${phone}&includeLoyalty=true`,
      `/accounts/vouchers/get?phone=${phone}`,
      '/accounts/profiles/',
      '/accounts/profiles/1',
    ]) {
      expect(await strings(path)).toEqual(stringify(await typed(path)));
    }
    expect(JSON.stringify(await strings(`/accounts/vouchers/get?phone=${phone}`))).toMatch(/"enabled":"(true|false)"/);
    // hostile member names (`__proto__` among the question codes) stay members
    const surveys = await pages(emulator, 'surveys', ...WINDOW);
    expect(surveys).toEqual(stringify(await pages(plain, 'surveys', ...WINDOW)));
    expect(JSON.stringify(surveys)).toContain('"__proto__"');
  });

  describe('zoneLabels', () => {
    const abbreviations = new Map([
      ['EET', 120],
      ['EEST', 180],
      ['CET', 60],
      ['CEST', 120],
      ['GMT', 0],
      ['BST', 60],
      ['WET', 0],
      ['WEST', 60],
    ]);
    const instantOf = (text: string): string => {
      const abbreviated = /^(\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}) ([A-Z]{3,4})$/.exec(text);
      if (abbreviated) {
        const offset = abbreviations.get(abbreviated[2]!);
        if (offset === undefined) throw new Error(`unknown abbreviation in ${text}`);
        return DateTime.fromFormat(abbreviated[1]!, 'yyyy-MM-dd HH:mm:ss', { zone: 'UTC' })
          .minus({ minutes: offset })
          .toISO()!;
      }
      const offsetForm = /^(\d{4}-\d{2}-\d{2})[T ](\d{2}:\d{2}:\d{2})(Z|[+-]\d{2}:?\d{2})$/.exec(text);
      if (!offsetForm) throw new Error(`not a labelled timestamp: ${text}`);
      return DateTime.fromISO(`${offsetForm[1]}T${offsetForm[2]}${offsetForm[3]}`).toUTC().toISO()!;
    };
    const stampsOf = (accounts: any[], surveys: any[]) => [
      ...accounts.flatMap((r) => [r.profileSet, r.customerSince, r.memberSince]),
      ...surveys.flatMap((e) => e.answers.map((a: any) => a.date)),
    ];

    it.each([
      [
        'abbreviations',
        /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2} (EET|EEST|CET|CEST|GMT|BST|WET|WEST)$/,
        ['EET', 'EEST', 'CET', 'GMT', 'BST'],
      ],
      [
        'offsets',
        /^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(Z|[+-]\d{2}:\d{2}|[+-]\d{4})$/,
        ['Z', '+02:00', '+0200', '+03:00'],
      ],
    ] as const)('%s: the same instants, every one labelled', async (zoneLabels, shape, seen) => {
      const emulator = await open({ zoneLabels });
      const plainStamps = stampsOf(await pages(plain, 'accounts', ...WINDOW), await pages(plain, 'surveys', ...WINDOW));
      const stamps = stampsOf(
        await pages(emulator, 'accounts', ...WINDOW),
        await pages(emulator, 'surveys', ...WINDOW),
      );
      expect(stamps).toHaveLength(plainStamps.length);
      const all = stamps.join('\n');
      for (const label of seen) expect(all).toContain(label);
      stamps.forEach((stamp, n) => {
        const before = readTimestamp(plainStamps[n]);
        if (before === null) return expect(stamp).toBe(plainStamps[n]);
        expect(stamp).toMatch(shape);
        expect(instantOf(stamp)).toBe(before);
      });
      const phone = busyPhone(plain, 3);
      const loyalty = (await call(emulator, `/accounts?phone=${phone}&includeLoyalty=true`)).body.loyalty;
      const plainLoyalty = (await call(plain, `/accounts?phone=${phone}&includeLoyalty=true`)).body.loyalty;
      expect(instantOf(loyalty.tier.expiry)).toBe(readTimestamp(plainLoyalty.tier.expiry));
      loyalty.balanceDetails.forEach((d: any, n: number) =>
        expect(instantOf(d.expires)).toBe(readTimestamp(plainLoyalty.balanceDetails[n].expires)),
      );
    });
  });

  it('unlistedFields: records carry the unlisted members, and nothing else changes', async () => {
    const emulator = await open({ unlistedFields: true });
    const accounts = await pages(emulator, 'accounts', ...WINDOW);
    const plainAccounts = await pages(plain, 'accounts', ...WINDOW);
    accounts.forEach((record, n) =>
      expect(record).toEqual({ ...plainAccounts[n], ...unlistedMembers('account', record.customerId) }),
    );
    expect(Object.keys(accounts[0]).slice(-UNLISTED_FIELDS.account.length)).toEqual(UNLISTED_FIELDS.account);
    const answer = (await pages(emulator, 'surveys', ...WINDOW))[0].answers[0];
    expect(answer).toMatchObject(unlistedMembers('surveyAnswer', `${answer.customerId} ${answer.date}`));
    const phone = busyPhone(plain, 3);
    const posting = (await call(emulator, `/accounts/loyalty/postings?phone=${phone}&pageSize=5&pageNumber=1`)).body
      .data[0];
    expect(posting).toMatchObject(unlistedMembers('posting', `${posting.receipt} ${posting.postingDate}`));
    const lookup = (await call(emulator, `/accounts?phone=${phone}&includeLoyalty=true`)).body;
    expect(lookup.loyalty).toMatchObject(unlistedMembers('loyalty', lookup.profile.accountId));
    const vouchers = (await call(emulator, `/accounts/vouchers/get?phone=${phone}`)).body;
    for (const voucher of vouchers)
      expect(Object.keys(voucher)).toEqual(expect.arrayContaining([...UNLISTED_FIELDS.voucher]));
  });

  it('listingOrder unstable: two requests of a page differ, and offset paging meets records twice and misses others', async () => {
    const emulator = await open({ listingOrder: 'unstable' });
    const path = `/business-data/accounts?start=${WINDOW[0]}&end=${WINDOW[1]}&page=1&size=10`;
    const [a, b] = [await call(emulator, path), await call(emulator, path)];
    expect(a.body.totalCount).toBe(b.body.totalCount);
    expect(a.body.data).not.toEqual(b.body.data);
    const truth = await pages(plain, 'accounts', ...WINDOW);
    const paged = await pages(emulator, 'accounts', ...WINDOW, 10);
    expect(paged).toHaveLength(truth.length);
    expect(new Set(paged.map((r) => r.customerId)).size).toBeLessThan(truth.length);
    // a single page holding the whole listing is complete, in some order
    const whole = (await call(emulator, `/business-data/accounts?start=${WINDOW[0]}&end=${WINDOW[1]}&page=1&size=1000`))
      .body.data;
    expect(new Set(whole.map((r: any) => JSON.stringify(r)))).toEqual(new Set(truth.map((r) => JSON.stringify(r))));
    // deterministic: a second emulator asked the same things answers the same
    const again = await open({ listingOrder: 'unstable' });
    expect((await call(again, path)).body).toEqual(a.body);
  });

  it('fieldNames sample: the exports name the customer accountId, as the samples and every other record do', async () => {
    const emulator = await open({ fieldNames: 'sample' });
    const accounts = await pages(emulator, 'accounts', ...WINDOW);
    const plainAccounts = await pages(plain, 'accounts', ...WINDOW);
    accounts.forEach((record, n) => {
      const { customerId, ...rest } = plainAccounts[n];
      expect(record).toEqual({ ...rest, accountId: customerId });
      expect(Object.keys(record)).toEqual(
        Object.keys(plainAccounts[n]).map((k) => (k === 'customerId' ? 'accountId' : k)),
      );
    });
    const [element] = await pages(emulator, 'surveys', ...WINDOW);
    const [plainElement] = await pages(plain, 'surveys', ...WINDOW);
    expect(element.answers.map((a: any) => a.accountId)).toEqual(plainElement.answers.map((a: any) => a.customerId));
    expect(element.answers.every((a: any) => !('customerId' in a))).toBe(true);
  });

  it.each([
    ['semicolon', (keys: string[]) => keys.join(';')],
    ['pipe', (keys: string[]) => keys.join('|')],
    ['json', (keys: string[]) => JSON.stringify(keys)],
    ['labels', (keys: string[]) => keys.map((k) => INTEREST_OPTIONS.find((o) => o.key === k)!.value).join(', ')],
  ] as const)(
    'choiceLists %s: Interests is served in that form, every other member as by default',
    async (form, shape) => {
      const emulator = await open({ choiceLists: form });
      const accounts = await pages(emulator, 'accounts', ...WINDOW);
      const plainAccounts = await pages(plain, 'accounts', ...WINDOW);
      const truth = new Map([...plain.truth.accounts(...WINDOW)].map((a) => [a.customer_id, a]));
      let seen = 0;
      accounts.forEach((record, n) => {
        const { Interests: served, ...fields } = record.customFieldMap ?? {};
        const { Interests: asPlain, ...plainFields } = plainAccounts[n].customFieldMap ?? {};
        expect({ ...record, customFieldMap: fields }).toEqual({ ...plainAccounts[n], customFieldMap: plainFields });
        const value = truth.get(record.customerId)?.custom_fields.Interests;
        if (typeof value !== 'string') return expect(served).toBe(asPlain);
        seen++;
        const keys = JSON.parse(value) as string[];
        expect(asPlain).toBe(keys.join(','));
        expect(served).toBe(shape(keys));
      });
      expect(seen).toBeGreaterThan(3);
    },
  );

  it('serves malformed records as they are under every reading, so the truth’s rejects stay exact', async () => {
    const readings: EmulatorReadings = {
      scalars: 'strings',
      fieldNames: 'sample',
      zoneLabels: 'offsets',
      unlistedFields: true,
    };
    const emulator = await open(readings, { badRecordRate: 0.2 });
    const served = new Set(
      (await allPages(emulator, 'accounts', ...WINDOW, 1000)).records.map((r) => JSON.stringify(r)),
    );
    const rejects = [...emulator.truth.rejects('accounts', ...WINDOW)];
    expect(rejects.length).toBeGreaterThan(0);
    for (const reject of rejects) expect(served.has(JSON.stringify(reject.payload))).toBe(true);
  });

  it('the default readings given explicitly answer as no readings do', async () => {
    const phone = phoneOf(plain);
    const again = await open({ ...DEFAULT_READINGS });
    for (const path of [
      `/business-data/surveys?start=${WINDOW[0]}&end=${WINDOW[1]}&page=1&size=50`,
      `/accounts?phone=${phone}&includeLoyalty=true`,
    ]) {
      expect(await call(again, path)).toEqual(await call(plain, path));
    }
  });
});
