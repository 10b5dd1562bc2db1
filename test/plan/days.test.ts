import fc from 'fast-check';
import { DateTime } from 'luxon';
import { describe, expect, it } from 'vitest';
import { addDays, dayNumber, daysBetween, dayText, weekday } from '../../src/plan/days.js';

/** What luxon's calendar says, the yardstick the plain arithmetic must agree with. */
const luxonDay = (day: string, n: number) => DateTime.fromISO(day, { zone: 'UTC' }).plus({ days: n }).toISODate();
const luxonBetween = (a: string, b: string) =>
  Math.round(DateTime.fromISO(b, { zone: 'UTC' }).diff(DateTime.fromISO(a, { zone: 'UTC' }), 'days').days);

const anyDay = fc
  .date({ min: new Date('0001-01-01T00:00:00Z'), max: new Date('9999-12-31T00:00:00Z'), noInvalidDate: true })
  .map((d) => d.toISOString().slice(0, 10));

describe('calendar days', () => {
  it('adds and counts days as luxon does, across leap years, centuries and the edges of the calendar', () => {
    fc.assert(
      fc.property(anyDay, fc.integer({ min: -800_000, max: 800_000 }), (day, n) => {
        expect(addDays(day, n)).toBe(luxonDay(day, n));
      }),
      { numRuns: 2000 },
    );
    fc.assert(
      fc.property(anyDay, anyDay, (a, b) => {
        expect(daysBetween(a, b)).toBe(luxonBetween(a, b));
      }),
      { numRuns: 2000 },
    );
    for (const [day, n, expected] of [
      ['2024-02-28', 1, '2024-02-29'],
      ['1900-02-28', 1, '1900-03-01'],
      ['2000-02-28', 1, '2000-02-29'],
      ['0001-01-01', -1, '0000-12-31'],
      ['0050-06-01', 1, '0050-06-02'],
      ['9999-12-31', 1, luxonDay('9999-12-31', 1)],
    ] as const)
      expect(addDays(day, n)).toBe(expected);
  });

  it('numbers days and names their weekday as luxon does, the years 1–99 included (the status page places windows by them)', () => {
    fc.assert(
      fc.property(anyDay, (day) => {
        const luxon = DateTime.fromISO(day, { zone: 'UTC' });
        expect(dayNumber(day)).toBe(Math.round(luxon.toMillis() / 86_400_000));
        expect(dayText(dayNumber(day))).toBe(day);
        expect(weekday(day)).toBe(luxon.weekday - 1);
      }),
      { numRuns: 2000 },
    );
    expect([dayNumber('1970-01-02'), weekday('1970-01-05'), weekday('0050-03-01')]).toEqual([1, 0, 1]);
  });

  it('refuses a text that is not a calendar day instead of planning from it', () => {
    for (const bad of ['2024-02-30', '2024-13-01', '2024-1-05', '20240105', '', '2024-01-01T00:00:00Z'])
      expect(() => addDays(bad, 1), bad).toThrow(/not a calendar day/);
    expect(() => daysBetween('2024-01-01', 'tomorrow')).toThrow(/not a calendar day/);
  });
});
