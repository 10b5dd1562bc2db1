import { describe, expect, it } from 'vitest';
import { normalizeAccount } from '../../src/streams/accounts.js';
import { surveyNormalizer } from '../../src/streams/surveys.js';
import { RecordError } from '../../src/transform/record-error.js';
import { cleanBoolean, cleanDecimal, cleanInteger } from '../../src/transform/values.js';

const ACCOUNT = {
  customerId: 'C000001',
  phone: '306900000001',
  profileSet: '2024-10-27 03:30:00 EET',
  customFieldMap: { tier: 'Gold' },
};

describe('records of a service that reads the spec its own way', () => {
  it('reads a customer named accountId as customerId, and rejects a record naming two customers', () => {
    const { customerId, ...rest } = ACCOUNT;
    expect(normalizeAccount({ ...rest, accountId: customerId }, 'Europe/Athens')).toEqual(
      normalizeAccount(ACCOUNT, 'Europe/Athens'),
    );
    expect(normalizeAccount({ ...ACCOUNT, accountId: customerId }, 'Europe/Athens')).toEqual(
      normalizeAccount(ACCOUNT, 'Europe/Athens'),
    );
    expect(() => normalizeAccount({ ...ACCOUNT, accountId: 'C000002' }, 'Europe/Athens')).toThrowError(RecordError);
    expect(() => normalizeAccount({ ...ACCOUNT, accountId: 'C000002' }, 'Europe/Athens')).toThrowError(
      /name different customers/,
    );
    const answer = { date: '2024-10-27 03:30:00', brand: 'B', questAnsMap: { Q1: 'yes' } };
    const questions = { 'How?': 'Q1' };
    const named = surveyNormalizer('Europe/Athens')({ answers: [{ ...answer, accountId: 'C000007' }], questions });
    expect(named).toEqual(
      surveyNormalizer('Europe/Athens')({ answers: [{ ...answer, customerId: 'C000007' }], questions }),
    );
  });

  it('reads numbers and Booleans sent as text exactly', () => {
    expect(cleanDecimal('12.5')).toBe('12.5000');
    expect(cleanInteger('2')).toBe(2);
    expect(['true', 'TRUE', '1', true].map((v) => cleanBoolean(v))).toEqual(['true', 'true', 'true', 'true']);
    expect(['false', 'False', '0', false].map((v) => cleanBoolean(v))).toEqual(['false', 'false', 'false', 'false']);
    expect(() => cleanBoolean('maybe', 'enabled')).toThrowError(/^enabled: expected true or false/);
    expect(() => cleanBoolean('2', 'enabled')).toThrowError(RecordError);
  });
});
