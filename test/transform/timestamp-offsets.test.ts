import fc from 'fast-check';
import { DateTime, IANAZone } from 'luxon';
import { expect, it } from 'vitest';
import { parseSourceTimestamp } from '../../src/transform/timestamps.js';
import { ZONES_WITH_CHANGES, zoneChanges } from '../helpers/zone-changes.js';

const MINUTE = 60_000;
const DAY = 86_400_000;
const CHANGES = new Map(ZONES_WITH_CHANGES.map((zone) => [zone, zoneChanges(zone)]));
/** Labels of a fixed offset (minutes), as the source may write them after a wall clock. */
const LABELS: ReadonlyArray<readonly [string, number]> = [
  [' UTC', 0],
  ['Z', 0],
  ['+02:00', 120],
  ['-0530', -330],
  [' EET', 120],
  [' CEST', 120],
  [' GMT', 0],
];

/**
 * The slow path: a wall clock read with offsets asked of `Intl` (through luxon) every time, no cache. A clock the
 * zone shows is read with an offset it has then (the earlier instant when it shows it twice); a clock it skipped,
 * with the offset before the change, unless that lands on another day (a day the zone left out).
 */
function slowRead(text: string, zone: string): string {
  const m = /^(\d{4})-(\d{2})-(\d{2})(?: (\d{2}):(\d{2}):(\d{2}))?(.*)$/.exec(text)!;
  const wall = Date.UTC(+m[1]!, +m[2]! - 1, +m[3]!, +(m[4] ?? 0), +(m[5] ?? 0), +(m[6] ?? 0));
  const label = LABELS.find(([l]) => l === m[7]);
  if (label) return new Date(wall - label[1] * MINUTE).toISOString();
  const z = IANAZone.create(zone);
  const fits = [z.offset(wall - DAY), z.offset(wall + DAY)].filter((o) => z.offset(wall - o * MINUTE) === o);
  if (fits.length > 0) return new Date(wall - Math.max(...fits) * MINUTE).toISOString();
  const utc = wall - z.offset(wall - DAY) * MINUTE;
  const shown = new Date(utc + z.offset(utc) * MINUTE).toISOString();
  return shown.slice(0, 10) === text.slice(0, 10) ? new Date(utc).toISOString() : 'not a real date';
}

function fastRead(text: string, zone: string): string {
  try {
    return parseSourceTimestamp(text, zone);
  } catch (error) {
    return /not a real date/.test((error as Error).message) ? 'not a real date' : (error as Error).message;
  }
}

/** An instant near a zone's clock change, near a year's end, or anywhere from 1850 to 2100. */
const instant = fc.oneof(
  fc
    .constantFrom(...ZONES_WITH_CHANGES.filter((zone) => CHANGES.get(zone)!.length > 0))
    .chain((zone) => fc.constantFrom(...CHANGES.get(zone)!))
    .chain((change) => fc.integer({ min: change - 2 * DAY, max: change + 2 * DAY })),
  fc
    .integer({ min: 1850, max: 2099 })
    .chain((year) => fc.integer({ min: Date.UTC(year, 11, 30), max: Date.UTC(year + 1, 0, 2) })),
  fc.integer({ min: Date.UTC(1850, 0, 1), max: Date.UTC(2100, 0, 1) }),
);

/** A timestamp the source may send for the instant: the zone's wall clock, UTC's read as zone-less, a bare date, a labelled one. */
const timestamp = fc
  .tuple(fc.constantFrom(...ZONES_WITH_CHANGES), instant, fc.nat(LABELS.length + 2))
  .map(([zone, ms, form]) => {
    const shown = DateTime.fromMillis(ms, { zone }).toFormat('yyyy-MM-dd HH:mm:ss');
    const utc = new Date(ms).toISOString().slice(0, 19).replace('T', ' ');
    if (form === 0) return [zone, shown] as const;
    if (form === 1) return [zone, utc] as const; // any clock, skipped and repeated ones too
    if (form === 2) return [zone, shown.slice(0, 10)] as const; // the day's start there, which a zone may skip
    return [zone, `${utc}${LABELS[form - 3]![0]}`] as const;
  });

it('reads every timestamp as the uncached reading does, in the order a load meets them', () => {
  fc.assert(
    fc.property(fc.array(timestamp, { minLength: 1, maxLength: 30 }), (timestamps) => {
      for (const [zone, text] of timestamps)
        expect(fastRead(text, zone), `${text} in ${zone}`).toBe(slowRead(text, zone));
    }),
    { numRuns: 2000 },
  );
});

it('reads the clocks of every change of every zone as the uncached reading does', () => {
  for (const [zone, changes] of CHANGES)
    for (const change of changes)
      for (const delta of [-DAY, -3_600_000, -1000, 0, 1000, 1_800_000, 3_600_000, DAY]) {
        const utc = new Date(change + delta).toISOString().slice(0, 19).replace('T', ' ');
        const shown = DateTime.fromMillis(change + delta, { zone }).toFormat('yyyy-MM-dd HH:mm:ss');
        for (const text of [utc, shown, shown.slice(0, 10)])
          expect(fastRead(text, zone), `${text} in ${zone}`).toBe(slowRead(text, zone));
      }
});
