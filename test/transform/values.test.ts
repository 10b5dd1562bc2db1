import { describe, expect, it } from 'vitest';
import { cleanBoolean, cleanDecimal, cleanInteger, cleanText, isMissingText } from '../../src/transform/values.js';
import { RecordError } from '../../src/transform/record-error.js';

describe('cleanText', () => {
  it('turns null, NULL and empty into null and keeps other text as sent', () => {
    expect(cleanText(null)).toBeNull();
    expect(cleanText('NULL')).toBeNull();
    expect(cleanText('')).toBeNull();
    expect(cleanText('   ')).toBeNull();
    expect(cleanText(' Athens ')).toBe(' Athens ');
    expect(cleanText(306912345678)).toBe('306912345678');
  });

  it('rejects objects where text is expected', () => {
    expect(() => cleanText({ a: 1 }, 'city')).toThrowError(RecordError);
  });
});

describe('cleanDecimal', () => {
  it('writes exact text with four decimals', () => {
    expect(cleanDecimal(12.345)).toBe('12.3450');
    expect(cleanDecimal('7')).toBe('7.0000');
    expect(cleanDecimal(-0)).toBe('0.0000');
    expect(cleanDecimal('NULL')).toBeNull();
  });

  it('rejects what DECIMAL(18,4) cannot hold', () => {
    expect(() => cleanDecimal(1e15)).toThrowError(RecordError);
    expect(() => cleanDecimal('12abc')).toThrowError(RecordError);
    expect(() => cleanDecimal(Number.NaN)).toThrowError(RecordError);
  });
});

describe('a missing value, however the service spells the text NULL', () => {
  const spellings = ['NULL', 'null', 'Null', 'nUlL', ' NULL', 'NULL ', '\tnull\n', '  ', ''];

  it('is a missing value in every spelling of NULL, in any case and with spaces around', () => {
    for (const s of spellings) expect(isMissingText(s), JSON.stringify(s)).toBe(true);
    for (const s of ['NULLS', 'nil', 'N/A', 'NUL L', '0', 'Nulla']) expect(isMissingText(s), s).toBe(false);
  });

  it('is NULL as text, decimal, whole number and Boolean', () => {
    for (const s of spellings) {
      expect(cleanText(s), JSON.stringify(s)).toBeNull();
      expect(cleanDecimal(s), JSON.stringify(s)).toBeNull();
      expect(cleanInteger(s), JSON.stringify(s)).toBeNull();
      expect(cleanBoolean(s), JSON.stringify(s)).toBeNull();
    }
    expect(cleanText('Nulla')).toBe('Nulla');
  });
});
