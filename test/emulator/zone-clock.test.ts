import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { DateTime } from 'luxon';
import { ZoneClock } from '../../src/emulator/model/zone-clock.js';

describe('ZoneClock', () => {
  it.each(['Europe/Athens', 'America/New_York', 'Australia/Lord_Howe', 'Asia/Kolkata', 'UTC'])(
    'formats local time like luxon in %s',
    (zone) => {
      const clock = new ZoneClock(zone);
      const changes = clock.transitions(2000, 2034);
      const anyInstant = fc.integer({ min: Date.UTC(2000, 0, 1), max: Date.UTC(2035, 0, 1) });
      // Most of the interest is within two hours of a clock change.
      const nearChange =
        changes.length === 0
          ? anyInstant
          : fc
              .tuple(fc.constantFrom(...changes), fc.integer({ min: -7_200_000, max: 7_200_000 }))
              .map(([at, d]) => at + d);
      fc.assert(
        fc.property(fc.oneof(anyInstant, nearChange), (ms) => {
          expect(clock.formatLocal(ms)).toBe(DateTime.fromMillis(ms, { zone }).toFormat('yyyy-MM-dd HH:mm:ss'));
          const wall = DateTime.fromMillis(ms, { zone });
          const other = [
            wall.minus({ hours: 1 }),
            wall.plus({ hours: 1 }),
            wall.minus({ minutes: 30 }),
            wall.plus({ minutes: 30 }),
          ];
          const ambiguous = other.some(
            (t) => t.toFormat('yyyy-MM-dd HH:mm:ss') === wall.toFormat('yyyy-MM-dd HH:mm:ss'),
          );
          expect(clock.isAmbiguousLocal(ms)).toBe(ambiguous);
        }),
        { numRuns: 3000 },
      );
    },
  );

  it('finds the clock changes of a year', () => {
    const clock = new ZoneClock('Europe/Athens');
    expect(clock.transitions(2024, 2024).map((ms) => new Date(ms).toISOString())).toEqual([
      '2024-03-31T01:00:00.000Z',
      '2024-10-27T01:00:00.000Z',
    ]);
    expect(new ZoneClock('Asia/Tokyo').transitions(2020, 2024)).toEqual([]);
  });

  it('knows the repeated hour when clocks go back', () => {
    const clock = new ZoneClock('Europe/Athens');
    expect(clock.isAmbiguousLocal(Date.parse('2024-10-27T00:30:00Z'))).toBe(true); // 03:30 local, first time
    expect(clock.isAmbiguousLocal(Date.parse('2024-10-27T01:30:00Z'))).toBe(true); // 03:30 local, second time
    expect(clock.isAmbiguousLocal(Date.parse('2024-10-27T02:30:00Z'))).toBe(false);
    expect(clock.isAmbiguousLocal(Date.parse('2024-03-31T01:30:00Z'))).toBe(false);
  });

  it('rejects an unknown zone', () => {
    expect(() => new ZoneClock('Mars/Olympus')).toThrow(RangeError);
  });
});
