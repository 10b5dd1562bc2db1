import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { postingNormalizer } from '../../src/streams/loyalty-postings.js';
import { splitSurveyElement, surveyIdOf, surveyNormalizer } from '../../src/streams/surveys.js';
import { contentKey } from '../../src/transform/keys.js';

const questions = { 'How was it?': 'Q1', 'Recommend us?': 'nps' };
const answer = (overrides: Record<string, unknown> = {}) => ({
  first: 'Eleni',
  last: 'NULL',
  phone: null,
  email: '',
  brand: 'Aroma',
  branch: 'Syntagma',
  staff: null,
  operator: 'NULL',
  date: '2024-03-01 12:00:00',
  customerId: 'C1',
  questAnsMap: { Q1: '5', nps: '' },
  receipt: 'R1',
  tierName: 'Gold',
  ...overrides,
});
const posting = (overrides: Record<string, unknown> = {}) => ({
  tierOrder: 2,
  tierName: 'Silver',
  credit: 10.5,
  creditValue: 1.05,
  debit: 0,
  debitValue: 0,
  awardOn: 21,
  currency: 'EUR',
  postingDate: '2024-03-01T10:00:00.000+0000',
  txnDate: '2024-03-01T09:59:00.000+0000',
  receipt: 'R9',
  branchName: 'Syntagma',
  brandName: 'Aroma',
  countryIso: 'GR',
  country: 'Greece',
  type: 1,
  postingType: 1,
  ...overrides,
});

function responseIds(records: unknown[]): string[] {
  const normalize = surveyNormalizer('Europe/Athens');
  return records.map((r) => normalize(r).survey_responses![0]!.response_id as string);
}

describe('derived keys', () => {
  it('a survey is its question set, whatever the order of its keys', () => {
    expect(
      surveyIdOf(
        new Map([
          ['a', '1'],
          ['b', '2'],
        ]),
      ),
    ).toBe(
      surveyIdOf(
        new Map([
          ['b', '2'],
          ['a', '1'],
        ]),
      ),
    );
    expect(surveyIdOf(new Map([['a', '1']]))).not.toBe(surveyIdOf(new Map([['a', '2']])));
  });

  it('splits a listing element into one record per answer, keeping its questions', () => {
    const parts = splitSurveyElement({ questions, answers: [answer(), answer({ customerId: 'C2' })] });
    expect(parts).toEqual([
      { questions, answers: [answer()] },
      { questions, answers: [answer({ customerId: 'C2' })] },
    ]);
    expect(splitSurveyElement({ answers: 'oops' })).toEqual([{ answers: 'oops' }]);
  });

  it('response ids do not depend on record order or rendering, and duplicates stay distinct', () => {
    const records = [answer(), answer({ customerId: 'C2' }), answer(), answer({ receipt: 'R2' })].map((a) => ({
      questions,
      answers: [a],
    }));
    fc.assert(
      fc.property(fc.shuffledSubarray(records, { minLength: records.length }), (shuffled) => {
        expect(new Set(responseIds(shuffled))).toEqual(new Set(responseIds(records)));
      }),
    );
    expect(new Set(responseIds(records)).size).toBe(4);
    // the same record rendered differently ("NULL" vs null, a zone label) is the same response
    const [plain] = responseIds([{ questions, answers: [answer()] }]);
    const [rendered] = responseIds([
      { questions, answers: [answer({ last: null, email: null, date: '2024-03-01 10:00:00 UTC' })] },
    ]);
    expect(rendered).toBe(plain);
  });

  it('posting ids keep exact duplicates apart and are stable across runs', () => {
    const ids = (list: unknown[]) => {
      const normalize = postingNormalizer('UTC');
      return list.map((p) => normalize({ customerId: 'C1', posting: p }).loyalty_postings![0]!.posting_id);
    };
    const list = [posting(), posting(), posting({ credit: 11 })];
    const first = ids(list);
    expect(new Set(first).size).toBe(3);
    expect(ids(list)).toEqual(first);
    expect(ids([posting({ credit: '10.50' })])[0]).toBe(first[0]);
    const normalize = postingNormalizer('UTC');
    expect(() => normalize({ customerId: 'C1', posting: posting({ postingDate: 'soon' }) })).toThrow(/postingDate/);
  });
});

describe('contentKey', () => {
  /** The key as first defined: each part's byte length and the part fed to SHA-256 one after the other. */
  function partByPart(...parts: Array<string | number | null>): string {
    const digest = createHash('sha256');
    for (const part of parts) {
      const text = part === null ? '\u0000null' : String(part);
      digest.update(`${Buffer.byteLength(text)}:`);
      digest.update(text);
    }
    return digest.digest('hex').slice(0, 24);
  }

  it('is the digest of its parts fed one by one, lone surrogates and NULs included', () => {
    const part = fc.oneof(
      fc.string({ unit: 'binary' }),
      fc.string({ unit: fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c)) }),
      fc.double(),
      fc.constant(null),
    );
    fc.assert(
      fc.property(fc.array(part, { maxLength: 6 }), (parts) => {
        expect(contentKey(...parts)).toBe(partByPart(...parts));
      }),
      { numRuns: 3000 },
    );
    expect(contentKey('ab', 'c')).not.toBe(contentKey('a', 'bc'));
  });
});
