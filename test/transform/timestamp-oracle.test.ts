import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseSourceTimestamp } from '../../src/transform/timestamps.js';
import { ZONES_WITH_CHANGES } from '../helpers/zone-changes.js';

// The oracle: the platform's Intl time zone data, a different implementation from the parser's.
const ZONES = ZONES_WITH_CHANGES;
const formatters = new Map(
  ZONES.map((zone) => [
    zone,
    new Intl.DateTimeFormat('en-CA', {
      timeZone: zone,
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
    }),
  ]),
);

/** Wall-clock time of `ms` in `zone`, as the source writes it: `YYYY-MM-DD HH:MM:SS`. */
function wallClock(ms: number, zone: string): string {
  const parts = Object.fromEntries(
    formatters
      .get(zone)!
      .formatToParts(new Date(ms))
      .map((p) => [p.type, p.value]),
  );
  return `${parts.year}-${parts.month}-${parts.day} ${parts.hour}:${parts.minute}:${parts.second}`;
}

const instant = fc
  .integer({ min: Date.UTC(1971, 0, 1) / 1000, max: Date.UTC(2037, 11, 31) / 1000 })
  .map((s) => s * 1000);
const zone = fc.constantFrom(...ZONES);

describe('timestamp parsing against an independent oracle', () => {
  it('reads a zone-less wall clock back to the instant it names (either one, where the clock repeats)', () => {
    fc.assert(
      fc.property(instant, zone, (ms, z) => {
        const local = wallClock(ms, z);
        const parsed = Date.parse(parseSourceTimestamp(local, z));
        if (parsed !== ms) {
          // only legitimate when the wall clock is ambiguous: the parsed instant shows the same clock
          expect(wallClock(parsed, z)).toBe(local);
          expect(Math.abs(parsed - ms)).toBeLessThanOrEqual(2 * 3600_000);
        }
      }),
      { numRuns: 3000 },
    );
  });

  it('reads UTC-labelled and offset timestamps exactly, whatever the business zone', () => {
    fc.assert(
      fc.property(instant, zone, fc.integer({ min: 0, max: 999 }), (ms, z, millis) => {
        const at = ms + millis;
        const iso = new Date(at).toISOString();
        const [day, time] = [iso.slice(0, 10), iso.slice(11, 23)];
        expect(parseSourceTimestamp(`${day} ${time.slice(0, 8)} UTC`, z)).toBe(`${iso.slice(0, 19)}.000Z`);
        expect(parseSourceTimestamp(`${day}T${time}+0000`, z)).toBe(iso);
        const shifted = new Date(at + 5.5 * 3600_000).toISOString();
        expect(parseSourceTimestamp(`${shifted.slice(0, 10)}T${shifted.slice(11, 23)}+05:30`, z)).toBe(iso);
      }),
      { numRuns: 2000 },
    );
  });

  it('never throws anything but a RecordError on arbitrary text', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 40 }), zone, (text, z) => {
        try {
          const out = parseSourceTimestamp(text, z);
          expect(out).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
        } catch (error) {
          expect((error as Error).name).toBe('RecordError');
        }
      }),
      { numRuns: 3000 },
    );
  });
});
