import { describe, expect, it } from 'vitest';
import { parseSourceDate, parseSourceTimestamp } from '../../src/transform/timestamps.js';
import { RecordError } from '../../src/transform/record-error.js';

describe('parseSourceTimestamp', () => {
  it('reads zone-less timestamps in the source zone, across DST', () => {
    expect(parseSourceTimestamp('2024-03-01 12:15:00', 'Europe/Athens')).toBe('2024-03-01T10:15:00.000Z');
    expect(parseSourceTimestamp('2024-07-01 12:15:00', 'Europe/Athens')).toBe('2024-07-01T09:15:00.000Z');
    expect(parseSourceTimestamp('2024-07-01 12:15:00', 'UTC')).toBe('2024-07-01T12:15:00.000Z');
  });

  it('reads clocks on the days a zone changes them', () => {
    // Athens springs forward 03:00 → 04:00 and falls back 04:00 → 03:00
    expect(parseSourceTimestamp('2024-03-31 02:30:00', 'Europe/Athens')).toBe('2024-03-31T00:30:00.000Z');
    expect(parseSourceTimestamp('2024-03-31 04:30:00', 'Europe/Athens')).toBe('2024-03-31T01:30:00.000Z');
    expect(parseSourceTimestamp('2024-10-27 05:00:00', 'Europe/Athens')).toBe('2024-10-27T03:00:00.000Z');
    // the first 04:00 after Apia's clocks jumped from 03:00 (a day 24 hours away from the zone's offset today)
    expect(parseSourceTimestamp('2011-09-24 04:00:00', 'Pacific/Apia')).toBe('2011-09-24T14:00:00.000Z');
    expect(parseSourceTimestamp('2011-12-31 12:00:00', 'Pacific/Apia')).toBe('2011-12-30T22:00:00.000Z');
    // Apia left out 30 December 2011 altogether
    expect(() => parseSourceTimestamp('2011-12-30 12:00:00', 'Pacific/Apia')).toThrowError(/not a real date/);
    // years before 100 are not read as the 1900s
    expect(parseSourceTimestamp('0099-06-01 12:00:00', 'UTC')).toBe('0099-06-01T12:00:00.000Z');
  });

  it('honours zone labels and offsets', () => {
    expect(parseSourceTimestamp('2024-03-01 12:15:00 UTC', 'Europe/Athens')).toBe('2024-03-01T12:15:00.000Z');
    expect(parseSourceTimestamp('2024-03-01T10:15:00.123+0000', 'Europe/Athens')).toBe('2024-03-01T10:15:00.123Z');
    expect(parseSourceTimestamp('2024-03-01T12:15:00+02:00', 'UTC')).toBe('2024-03-01T10:15:00.000Z');
    expect(parseSourceTimestamp('2024-03-01 12:15:00 Europe/Athens', 'UTC')).toBe('2024-03-01T10:15:00.000Z');
    expect(parseSourceTimestamp('2024-03-01T10:15:00Z', 'Asia/Tokyo')).toBe('2024-03-01T10:15:00.000Z');
  });

  it('reads every offset form, UTC±N and the table of zone abbreviations', () => {
    const at = '2024-07-01T10:15:00.000Z';
    for (const text of [
      '2024-07-01 12:15:00+02:00',
      '2024-07-01 12:15:00 +0200',
      '2024-07-01T12:15:00+02',
      '2024-07-01 12:15:00 UTC+2',
      '2024-07-01 12:15:00 GMT+02:00',
      '2024-07-01 12:15:00 CEST',
      '2024-07-01 13:15:00 EEST',
      '2024-07-01 11:15:00 BST',
      '2024-07-01 11:15:00 west',
      '2024-07-01 06:15:00 EDT',
      '2024-07-01T10:15:00Z',
    ])
      expect(parseSourceTimestamp(text, 'Asia/Tokyo'), text).toBe(at);
    expect(parseSourceTimestamp('2024-01-15 12:15:00 EET', 'UTC')).toBe('2024-01-15T10:15:00.000Z');
    expect(parseSourceTimestamp('2024-01-15 05:15:00 UTC-05:00', 'UTC')).toBe('2024-01-15T10:15:00.000Z');
  });

  it('rejects an ambiguous abbreviation, saying what it could mean, instead of guessing', () => {
    expect(() => parseSourceTimestamp('2024-07-01 12:15:00 IST', 'UTC', 'date')).toThrowError(
      /^date: ambiguous time zone label "IST": it may mean India/,
    );
    expect(() => parseSourceTimestamp('2024-07-01 12:15:00 CST', 'UTC', 'date')).toThrowError(RecordError);
  });

  it('reads a bare date where a timestamp is expected as midnight in the source zone', () => {
    expect(parseSourceTimestamp('2024-07-01', 'Europe/Athens')).toBe('2024-06-30T21:00:00.000Z');
    expect(parseSourceTimestamp(' 2024-01-15 ', 'UTC')).toBe('2024-01-15T00:00:00.000Z');
    expect(() => parseSourceTimestamp('2024-02-30', 'UTC')).toThrowError(/not a real date/);
  });

  it.each([
    'yesterday',
    '2024-02-30 10:00:00',
    '2024-13-01 10:00:00',
    '2024-03-01 10:00:00 XYZ',
    '2024-03-01 25:00:00',
    '2024-03-01 10:60:00',
    '2024-03-01 10:00:60',
    '2024-03-01 24:00:00',
    '0000-01-01 00:00:00',
    '2024-03-01 10:00:00 +2500',
    '2024-03-01 10:00:00 UTC+19',
    '2024-03-01 10:00:00 UTC+',
  ])('rejects %s with a RecordError naming the field', (text) => {
    expect(() => parseSourceTimestamp(text, 'UTC', 'profileSet')).toThrowError(RecordError);
    expect(() => parseSourceTimestamp(text, 'UTC', 'profileSet')).toThrowError(/^profileSet: /);
  });
});

describe('parseSourceDate', () => {
  it('accepts real days and rejects the rest', () => {
    expect(parseSourceDate('1990-02-28')).toBe('1990-02-28');
    expect(parseSourceDate(' 2024-02-29 ')).toBe('2024-02-29');
    expect(parseSourceDate('2000-02-29')).toBe('2000-02-29');
    expect(parseSourceDate('0001-01-01')).toBe('0001-01-01');
    for (const bad of [
      '2023-02-29',
      '1900-02-29',
      '0000-01-01',
      '2024-04-31',
      '2024-00-10',
      '2024-1-10',
      '2024-01-10T00:00',
    ]) {
      expect(() => parseSourceDate(bad, 'birthdate'), bad).toThrowError(/^birthdate: not a date YYYY-MM-DD/);
    }
    expect(() => parseSourceDate('1990-02-31')).toThrowError(RecordError);
    expect(() => parseSourceDate('31/02/1990')).toThrowError(RecordError);
  });
});
