import fc from 'fast-check';
import { DateTime, FixedOffsetZone, IANAZone } from 'luxon';
import { describe, expect, it } from 'vitest';
import { dayOfMillis } from '../../src/plan/days.js';
import { offsetAt } from '../../src/plan/zone-offsets.js';
import { ZONES_WITH_CHANGES, zoneChanges } from '../helpers/zone-changes.js';

const ZONES = ZONES_WITH_CHANGES;

/** The slow path: luxon's day of the instant, the calendar's first or last day outside years 1 to 9999. */
function luxonDay(ms: number, zone: string): string {
  const at = DateTime.fromMillis(ms, { zone });
  if (at.year > 9999) return '9999-12-31';
  if (at.year < 1) return '0001-01-01';
  return at.toISODate()!;
}

const CHANGES = new Map(ZONES.map((zone) => [zone, zoneChanges(zone)]));

const nearChange = fc
  .constantFrom(...ZONES.filter((zone) => CHANGES.get(zone)!.length > 0))
  .chain((zone) =>
    fc.tuple(
      fc.constant(zone),
      fc.constantFrom(...CHANGES.get(zone)!),
      fc.integer({ min: -26 * 3_600_000, max: 26 * 3_600_000 }),
    ),
  )
  .map(([zone, change, delta]) => [zone, change + delta] as const);
const anywhere = fc.tuple(
  fc.constantFrom(...ZONES),
  fc.integer({ min: Date.UTC(1850, 0, 1), max: Date.UTC(2100, 0, 1) }),
);

it('finds clock changes to test near', () => {
  expect(CHANGES.get('Europe/Athens')!.length).toBeGreaterThan(100);
  expect(CHANGES.get('Pacific/Apia')).toContain(Date.UTC(2011, 11, 30, 10));
});

describe('offsetAt', () => {
  it('is the offset luxon finds through Intl, near clock changes and anywhere, in any order', () => {
    fc.assert(
      fc.property(
        fc.array(fc.oneof(nearChange, anywhere), { minLength: 1, maxLength: 40 }),
        fc.double({ min: -0.999, max: 0.999, noNaN: true }),
        (instants, fraction) => {
          for (const [zone, ms] of instants) {
            const z = IANAZone.create(zone);
            expect(offsetAt(ms, z)).toBe(z.offset(ms));
            // a fraction of a millisecond, as arithmetic on fractional offsets leaves: cut off as `Date` cuts it
            expect(offsetAt(ms + fraction, z)).toBe(z.offset(ms + fraction));
          }
        },
      ),
      { numRuns: 1500 },
    );
  });

  it('is the offset on each side of every change, to the millisecond', () => {
    for (const [zone, list] of CHANGES) {
      const z = IANAZone.create(zone);
      for (const change of list)
        for (const ms of [change - 1001, change - 1, change - 0.5, change, change + 0.5, change + 999, change + 1000])
          expect(offsetAt(ms, z), `${zone} ${new Date(ms).toISOString()}`).toBe(z.offset(ms));
    }
  });

  it('is the offset of a zone of a fixed offset', () => {
    expect(offsetAt(Date.UTC(2024, 2, 31, 1), FixedOffsetZone.instance(330))).toBe(330);
  });
});

describe('dayOfMillis', () => {
  it('gives the day luxon gives, near clock changes, in the order a load meets instants', () => {
    fc.assert(
      fc.property(fc.array(fc.oneof(nearChange, anywhere), { minLength: 1, maxLength: 40 }), (instants) => {
        for (const [zone, ms] of instants) expect(dayOfMillis(ms, zone)).toBe(luxonDay(ms, zone));
      }),
      { numRuns: 1500 },
    );
  });

  it('gives the day luxon gives on each side of every change, to the millisecond', () => {
    for (const [zone, list] of CHANGES)
      for (const change of list)
        for (const ms of [change - 1, change, change + 999, change + 1000])
          expect(dayOfMillis(ms, zone), `${zone} ${new Date(ms).toISOString()}`).toBe(luxonDay(ms, zone));
  });

  it('gives the last hours of a year the day luxon gives, and the calendar edges its first and last day', () => {
    const yearEnd = fc
      .tuple(fc.integer({ min: 1, max: 9999 }), fc.integer({ min: -15 * 3_600_000, max: 15 * 3_600_000 }))
      .map(([year, delta]) => Date.parse(`${String(year).padStart(4, '0')}-12-31T12:00:00.000Z`) + delta);
    fc.assert(
      fc.property(yearEnd, fc.constantFrom(...ZONES), (ms, zone) => {
        expect(dayOfMillis(ms, zone)).toBe(luxonDay(ms, zone));
      }),
      { numRuns: 3000 },
    );
    expect(dayOfMillis(Date.parse('9999-12-31T23:59:59.000Z'), 'Pacific/Kiritimati')).toBe('9999-12-31');
    expect(dayOfMillis(Date.parse('0001-01-01T00:00:00.000Z'), 'America/New_York')).toBe('0001-01-01');
    expect(dayOfMillis(Date.parse('0001-01-01T00:00:00.000Z'), 'Europe/Athens')).toBe('0001-01-01');
  });
});
