import { describe, expect, it } from 'vitest';
import { normalizeRecords } from '../../src/pipeline/record-rows.js';
import { normalizeAccount } from '../../src/streams/accounts.js';
import { postingNormalizer } from '../../src/streams/loyalty-postings.js';
import { surveyNormalizer } from '../../src/streams/surveys.js';
import type { NormalizedRecord } from '../../src/streams/stream.js';

const TZ = 'Europe/Athens';

/** Normalizes records as a span does: rows per table, and what goes to `_etl_rejects` with its reason. */
function normalize(normalizer: (raw: unknown) => NormalizedRecord, records: unknown[]) {
  const { rows, invalid } = normalizeRecords(normalizer, records, '2024-11-15', 0);
  const byTable = Object.fromEntries([...rows].map(([table, list]) => [table, list.map((r) => r.row)]));
  return { rows: byTable, rejects: invalid.map((i) => i.error.message) };
}

const account = {
  customerId: 'C000001',
  phone: '306900000001',
  email: 'a@example.com',
  first: 'Anna',
  last: 'Papa',
  birthdate: '1990-01-01',
  source: 'import',
  profileSet: '2024-11-15 08:00:00 UTC',
  country: 'Greece',
  customerSince: null,
  memberSince: 'NULL',
  nationality: '',
  gender: 'F',
  city: 'Athens',
  language: 'el',
  customFieldMap: { loyaltyTier: 'Bronze', __proto__: 'kept' },
};

describe('an account with a field the pipeline cannot read', () => {
  const cases: Array<[string, Record<string, unknown>, string, string, unknown]> = [
    ['a birthdate that is no day', { birthdate: '31/02/1990' }, 'birthdate', 'birthdate', '31/02/1990'],
    ['a profileSet that is no instant', { profileSet: 'yesterday' }, 'profileSet', 'profile_set_at', 'yesterday'],
    ['a city that is an object', { city: { name: 'Athens' } }, 'city', 'city', { name: 'Athens' }],
  ];
  it.each(cases)('loads %s as NULL and keeps the raw value and the problem', (_, change, field, column, raw) => {
    const { rows, rejects } = normalize((r) => normalizeAccount(r, TZ), [{ ...account, ...change }]);
    expect(rejects).toEqual([]);
    expect(rows.accounts).toHaveLength(1);
    expect(rows.accounts![0]).toMatchObject({ customer_id: 'C000001', [column]: null, country: 'Greece' });
    expect(rows._etl_field_rejects).toEqual([
      { record_key: 'C000001', field, raw_value: JSON.stringify(raw), error: expect.stringMatching(`^${field}: `) },
    ]);
  });

  it('loads every spelling of the text NULL (any case, spaces around) as NULL, with no field reject', () => {
    const spelled = {
      birthdate: 'null',
      profileSet: ' Null ',
      memberSince: 'nULL',
      city: '  NULL',
      phone: 'null\t',
      customFieldMap: { loyaltyTier: 'Null', hobby: 'Nullarbor' },
    };
    const { rows, rejects } = normalize((r) => normalizeAccount(r, TZ), [{ ...account, ...spelled }]);
    expect(rejects).toEqual([]);
    expect(rows._etl_field_rejects ?? []).toEqual([]);
    expect(rows.accounts![0]).toMatchObject({
      birthdate: null,
      profile_set_at: null,
      member_since: null,
      city: null,
      phone: null,
    });
    expect(JSON.parse(rows.accounts![0]!._custom_fields as string)).toMatchObject({
      loyaltyTier: null,
      hobby: 'Nullarbor',
    });
  });

  it('keeps the good custom fields of a customFieldMap with one bad member, that one NULL under its name', () => {
    const raw = JSON.parse(
      JSON.stringify({ ...account, customFieldMap: undefined }).replace(
        /}$/,
        ',"customFieldMap":{"loyaltyTier":"Bronze","__proto__":"kept","pets":["cat"]}}',
      ),
    ) as unknown;
    const { rows, rejects } = normalize((r) => normalizeAccount(r, TZ), [raw]);
    expect(rejects).toEqual([]);
    expect(JSON.parse(String(rows.accounts![0]!._custom_fields))).toEqual(
      JSON.parse('{"loyaltyTier":"Bronze","__proto__":"kept","pets":null}'),
    );
    expect(rows._etl_field_rejects).toEqual([
      {
        record_key: 'C000001',
        field: 'customFieldMap.pets',
        raw_value: '["cat"]',
        error: expect.stringMatching(/expected text/),
      },
    ]);
  });

  it('loads a customFieldMap that is no object as no custom fields', () => {
    const { rows, rejects } = normalize((r) => normalizeAccount(r, TZ), [{ ...account, customFieldMap: 'oops' }]);
    expect(rejects).toEqual([]);
    expect(rows.accounts![0]!._custom_fields).toBe('{}');
    expect(rows._etl_field_rejects).toEqual([
      expect.objectContaining({ field: 'customFieldMap', raw_value: '"oops"' }),
    ]);
  });

  const whole: Array<[string, unknown, RegExp]> = [
    ['no customerId', { ...account, customerId: undefined }, /customerId: is missing/],
    ['a customerId that is no text', { ...account, customerId: 900001 }, /customerId/],
    ['a record that is no object', 'C000001', /not an object/],
  ];
  it.each(whole)('rejects a record with %s, whole', (_, raw, reason) => {
    const { rows, rejects } = normalize((r) => normalizeAccount(r, TZ), [raw]);
    expect(rows).toEqual({});
    expect(rejects).toEqual([expect.stringMatching(reason)]);
  });
});

const answer = {
  first: 'Anna',
  last: null,
  phone: null,
  email: 'a@example.com',
  brand: 'Aroma Coffee',
  branch: 'Syntagma',
  staff: null,
  operator: 'NULL',
  date: '2024-11-15 10:00:00 UTC',
  customerId: 'C000001',
  questAnsMap: { Q1: '5', Q2: 'yes' },
  receipt: 'R1',
  tierName: 'Bronze',
};
const element = (a: Record<string, unknown>) => ({ answers: [a], questions: { 'How?': 'Q1', 'Why?': 'Q2' } });

describe('a survey answer with a field the pipeline cannot read', () => {
  it('loads a brand that is no text as NULL, keyed apart from an answer that differs only there', () => {
    const { rows, rejects } = normalize(surveyNormalizer(TZ), [
      element({ ...answer, brand: { name: 'Aroma' } }),
      element({ ...answer, brand: ['Aroma'] }),
    ]);
    expect(rejects).toEqual([]);
    expect(rows.survey_responses!.map((r) => r.brand)).toEqual([null, null]);
    const [a, b] = rows.survey_responses!.map((r) => String(r.response_id));
    expect(a).not.toBe(b);
    expect(rows._etl_field_rejects).toEqual([
      { record_key: a, field: 'brand', raw_value: '{"name":"Aroma"}', error: expect.stringMatching(/^brand: /) },
      { record_key: b, field: 'brand', raw_value: '["Aroma"]', error: expect.stringMatching(/^brand: /) },
    ]);
  });

  it("keeps a customer's good answers when one is unreadable, that one NULL under its code", () => {
    const { rows, rejects } = normalize(surveyNormalizer(TZ), [
      element({ ...answer, questAnsMap: { Q1: '5', Q2: { choice: 'yes' } } }),
    ]);
    expect(rejects).toEqual([]);
    expect(JSON.parse(String(rows.survey_responses![0]!._answers))).toEqual({ Q1: '5', Q2: null });
    expect(rows._etl_field_rejects).toEqual([
      expect.objectContaining({ field: 'questAnsMap.Q2', raw_value: '{"choice":"yes"}' }),
    ]);
  });

  it('keys a good answer as it always was: the lenient reading adds nothing to a good key', () => {
    const good = normalize(surveyNormalizer(TZ), [element(answer)]).rows.survey_responses![0]!;
    const spoiled = normalize(surveyNormalizer(TZ), [element({ ...answer, staff: { x: 1 } })]).rows
      .survey_responses![0]!;
    expect(good.response_id).toBe('dee52d96ef9276d71b91fd56'); // as the code before the lenient reading keyed it;
    expect(spoiled.response_id).not.toBe(good.response_id);
  });

  const whole: Array<[string, unknown, RegExp]> = [
    ['no customerId', element({ ...answer, customerId: undefined }), /customerId/],
    ['no questions', { answers: [answer] }, /questions/],
    [
      'a date that is no instant (it files the answer under its window)',
      element({ ...answer, date: 'yesterday' }),
      /^date: /,
    ],
    ['no date', element({ ...answer, date: undefined }), /date/],
    ['a record that is no object', 'oops', /expected object/],
  ];
  it.each(whole)('rejects an answer with %s, whole', (_, raw, reason) => {
    const { rows, rejects } = normalize(surveyNormalizer(TZ), [raw]);
    expect(rows).toEqual({});
    expect(rejects).toEqual([expect.stringMatching(reason)]);
  });
});

const posting = {
  tierOrder: 1,
  tierName: 'Bronze',
  credit: 10,
  creditValue: 0.5,
  debit: 0,
  debitValue: 0,
  awardOn: 10,
  currency: 'EUR',
  postingDate: '2024-11-15 10:00:00',
  txnDate: null,
  receipt: 'R1',
  branchName: 'Syntagma',
  brandName: 'Aroma',
  countryIso: 'GR',
  country: 'Greece',
  type: 1,
  postingType: 1,
};

describe('a posting with a field the pipeline cannot read', () => {
  it('loads credit that is no number as NULL, its id apart from a posting differing only there', () => {
    const { rows, rejects } = normalize(postingNormalizer(TZ), [
      { customerId: 'C000001', posting: { ...posting, credit: 'ten' } },
      { customerId: 'C000001', posting: { ...posting, credit: 'eleven' } },
      { customerId: 'C000001', posting },
    ]);
    expect(rejects).toEqual([]);
    expect(rows.loyalty_postings!.map((r) => r.credit)).toEqual([null, null, '10.0000']);
    const ids = rows.loyalty_postings!.map((r) => String(r.posting_id));
    expect(new Set(ids).size).toBe(3);
    expect(rows._etl_field_rejects).toEqual([
      {
        record_key: ids[0],
        field: 'credit',
        raw_value: '"ten"',
        error: expect.stringMatching(/^credit: not a number/),
      },
      { record_key: ids[1], field: 'credit', raw_value: '"eleven"', error: expect.stringMatching(/^credit: /) },
    ]);
  });

  const whole: Array<[string, unknown, RegExp]> = [
    ['a postingDate that is no text', { customerId: 'C1', posting: { ...posting, postingDate: 5 } }, /postingDate/],
    [
      'a postingDate that is no instant',
      { customerId: 'C1', posting: { ...posting, postingDate: 'now' } },
      /postingDate/,
    ],
    ['a posting that is no object', { customerId: 'C1', posting: 'oops' }, /posting/],
  ];
  it.each(whole)('rejects a posting with %s, whole', (_, raw, reason) => {
    const { rows, rejects } = normalize(postingNormalizer(TZ), [raw]);
    expect(rows).toEqual({});
    expect(rejects).toEqual([expect.stringMatching(reason)]);
  });
});
