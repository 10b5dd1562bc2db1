import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Emulator } from '../../src/emulator/index.js';
import {
  LAST_DAY,
  allPages,
  allPostings,
  call,
  canonical,
  dayOf,
  parseNdjson,
  readPostingTime,
  readTimestamp,
  start,
  text,
} from './emulator-fixture.js';

/** A field read as a warehouse does: null, and kept in `unreadable` with its raw value, where `read` throws. */
function lenient<T>(unreadable: string[], key: string, field: string, raw: unknown, read: () => T): T | null {
  try {
    return read();
  } catch {
    unreadable.push(JSON.stringify([key, field, JSON.stringify(raw)]));
    return null;
  }
}

const REAL_DAY = /^(\d{4})-(\d{2})-(\d{2})$/;
function readDay(value: unknown): unknown {
  const day = canonical(value);
  if (day === null) return null;
  const m = REAL_DAY.exec(String(day));
  const date = m ? new Date(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]))) : null;
  if (!date || date.getUTCDate() !== Number(m![3])) throw new Error(`not a day: ${String(day)}`);
  return day;
}

/** Named texts as a warehouse holds them: a member that is no text null, an object that is no object none. */
function readTexts(unreadable: string[], key: string, field: string, raw: unknown): Record<string, unknown> {
  if (raw === null || typeof raw !== 'object') {
    lenient(unreadable, key, field, raw, () => {
      throw new Error('no object');
    });
    return {};
  }
  return Object.fromEntries(
    Object.entries(raw).map(([k, v]) => [
      k,
      lenient(unreadable, key, `${field}.${k}`, v, () => {
        if (v !== null && typeof v === 'object') throw new Error('no text');
        return canonical(v);
      }),
    ]),
  );
}

/** What a warehouse would hold for a served account record, read without the emulator's code. */
function accountAsWarehouse(r: any, unreadable: string[] = []) {
  const id = r.customerId;
  return {
    customer_id: id,
    phone: canonical(r.phone),
    email: canonical(r.email),
    first_name: canonical(r.first),
    last_name: canonical(r.last),
    birthdate: lenient(unreadable, id, 'birthdate', r.birthdate, () => readDay(r.birthdate)),
    source: canonical(r.source),
    profile_set_at: lenient(unreadable, id, 'profileSet', r.profileSet, () => readTimestamp(r.profileSet)),
    country: canonical(r.country),
    customer_since: readTimestamp(r.customerSince),
    member_since: readTimestamp(r.memberSince),
    nationality: canonical(r.nationality),
    gender: canonical(r.gender),
    city: canonical(r.city),
    language: canonical(r.language),
    custom_fields: multipleChoice(readTexts(unreadable, id, 'customFieldMap', r.customFieldMap)),
  };
}

/** The multiple-choice field `Interests`, served as keys joined by `,` (no key holds one), as its keys in a JSON array. */
function multipleChoice(fields: Record<string, unknown>): Record<string, unknown> {
  const value = fields.Interests;
  if (typeof value === 'string') fields.Interests = JSON.stringify(value.split(','));
  return fields;
}

function answersAsWarehouse(element: any, unreadable: string[] = []) {
  return element.answers.map((a: any) => ({
    customer_id: a.customerId,
    answered_at: readTimestamp(a.date),
    brand: canonical(a.brand),
    branch: canonical(a.branch),
    staff: canonical(a.staff),
    operator: canonical(a.operator),
    receipt: canonical(a.receipt),
    tier_name: canonical(a.tierName),
    first_name: canonical(a.first),
    last_name: canonical(a.last),
    phone: canonical(a.phone),
    email: canonical(a.email),
    questions: element.questions,
    answers: readTexts(unreadable, a.customerId, 'questAnsMap', a.questAnsMap),
  }));
}

const fieldRejectsAsText = (rows: Iterable<{ customer_id: string; field: string; raw_value: string }>) =>
  [...rows].map((f) => JSON.stringify([f.customer_id, f.field, f.raw_value]));

describe('ground truth', () => {
  let emulator: Emulator;
  beforeAll(async () => {
    emulator = await start({ badRecordRate: 0.05 });
  });
  afterAll(() => emulator.close());

  it('accounts: equals what the export serves, read independently', async () => {
    for (const [s, e] of [
      ['2024-08-18', '2024-11-15'],
      ['2024-10-26', '2024-10-28'],
      ['2024-09-03', '2024-09-03'],
    ] as const) {
      // a record whose key can be read loads; the fields of it that cannot be read are NULL, and said
      const served = (await allPages(emulator, 'accounts', s, e, 64)).records.filter(
        (r) => typeof r.customerId === 'string',
      );
      const unreadable: string[] = [];
      expect(served.map((r) => accountAsWarehouse(r, unreadable))).toEqual([...emulator.truth.accounts(s, e)]);
      expect(unreadable).toEqual(fieldRejectsAsText(emulator.truth.fieldRejects('accounts', s, e)));
      if (s === '2024-08-18') expect(unreadable.length).toBeGreaterThan(3);
    }
  });

  it('survey responses: equal what the export serves, read independently', async () => {
    const served = (await allPages(emulator, 'surveys', '2024-10-20', '2024-11-02', 64)).records;
    const rejects = [...emulator.truth.rejects('surveys', '2024-10-20', '2024-11-02')].map((r) =>
      JSON.stringify(r.payload),
    );
    const valid = served.filter((e) => !rejects.includes(JSON.stringify(e)));
    expect(valid.length).toBe(served.length - rejects.length);
    const unreadable: string[] = [];
    expect(valid.flatMap((e) => answersAsWarehouse(e, unreadable))).toEqual([
      ...emulator.truth.surveyResponses('2024-10-20', '2024-11-02'),
    ]);
    expect(unreadable).toEqual(fieldRejectsAsText(emulator.truth.fieldRejects('surveys', '2024-10-20', '2024-11-02')));
  });

  it('postings: equal what every customer serves, filtered to the window by day in the zone', async () => {
    const [s, e] = ['2024-10-20', '2024-11-02'];
    const expected: any[] = [];
    for (const customer of emulator.truth.customers(e)) {
      const query = customer.phone ? `phone=${customer.phone}` : `email=${encodeURIComponent(customer.email!)}`;
      const probe = await call(emulator, `/accounts/loyalty/postings?${query}&pageSize=1&pageNumber=1`);
      if (probe.status === 404) continue;
      for (const p of (await allPostings(emulator, query, 1000)).reverse()) {
        const postedAt = readPostingTime(p.postingDate);
        if (dayOf(postedAt) < s || dayOf(postedAt) > e) continue;
        expected.push({
          customer_id: customer.customer_id,
          posted_at: postedAt,
          receipt: p.receipt,
          credit: p.credit,
          debit: p.debit,
        });
      }
    }
    const truth = [...emulator.truth.postings(s, e)].map((p) => ({
      customer_id: p.customer_id,
      posted_at: p.posted_at,
      receipt: p.receipt,
      credit: p.credit,
      debit: p.debit,
    }));
    expect(truth.length).toBeGreaterThan(100);
    expect(truth).toEqual(expected);
  });

  it('is served over HTTP as NDJSON, identical to the in-process truth', async () => {
    const [s, e] = ['2024-09-01', '2024-09-30'];
    const dumps = {
      accounts: [...emulator.truth.accounts(s, e)],
      'survey-responses': [...emulator.truth.surveyResponses(s, e)],
      postings: [...emulator.truth.postings(s, e)],
      'rejects-accounts': [...emulator.truth.rejects('accounts', s, e)],
      'rejects-surveys': [...emulator.truth.rejects('surveys', s, e)],
      'field-rejects-accounts': [...emulator.truth.fieldRejects('accounts', s, e)],
    };
    for (const [name, rows] of Object.entries(dumps)) {
      expect(rows.length, name).toBeGreaterThan(0);
      const response = await fetch(`${emulator.url}/_emulator/truth/${name}?start=${s}&end=${e}`);
      expect(response.headers.get('content-type')).toContain('application/x-ndjson');
      expect(parseNdjson(await response.text())).toEqual(JSON.parse(JSON.stringify(rows)));
    }
    const customers = parseNdjson(await text(emulator, `/_emulator/truth/customers?through=${LAST_DAY}`));
    expect(customers).toHaveLength(300);
    expect((await call(emulator, '/_emulator/truth/surveys')).body).toEqual(emulator.truth.surveys());
  });

  it('streams a large dump without building it first', async () => {
    const response = await fetch(`${emulator.url}/_emulator/truth/postings?start=2024-08-18&end=2024-11-15`);
    expect(response.headers.get('content-length')).toBeNull();
    expect(response.headers.get('transfer-encoding')).toBe('chunked');
    const rows = parseNdjson(await response.text());
    expect(rows.length).toBe([...emulator.truth.postings('2024-08-18', '2024-11-15')].length);
  });

  it('counts requests per path prefix', async () => {
    emulator.stats.reset();
    await call(emulator, '/business-data/accounts?start=2024-09-01&end=2024-09-01&page=1&size=5');
    await call(emulator, '/business-data/surveys?start=2024-09-01&end=2024-09-01&page=1&size=5');
    await call(emulator, '/nowhere');
    expect(emulator.stats.requests('/business-data')).toBe(2);
    expect(emulator.stats.requests('/business-data/accounts')).toBe(1);
    expect(emulator.stats.requests()).toBe(3);
    const { body } = await call(emulator, '/_emulator/stats');
    expect(body.byPath['/nowhere']).toBe(1);
  });

  it('rejects a malformed day', () => {
    expect(() => emulator.truth.accounts('2024-13-01', '2024-12-01')).toThrow(RangeError);
  });
});
