import type { Zone } from 'luxon';

const HOUR = 3_600_000;
const DAY = 86_400_000;
const MAX_CACHED = 100_000;

/** Steady offsets (minutes) of a zone by UTC day and by UTC hour since 1970, null for one its offset changes in. */
interface Steady {
  days: Map<number, number | null>;
  hours: Map<number, number | null>;
}

const cached = new Map<Zone, Steady>();

/**
 * `zone.offset(ms)` (minutes), from a cache: the offset of the UTC day `ms` falls in, or on a day the offset changes,
 * of its hour, when the zone has the same offset at the first and the last millisecond of that day or hour; else
 * `zone.offset(ms)` itself. That is exact because zones change their clocks at most once a day, never there and
 * back within one. Finding an offset through `Intl` costs more than the rest of reading a timestamp, and a
 * source's instants fall on comparatively few distinct days.
 */
export function offsetAt(ms: number, zone: Zone): number {
  if (zone.isUniversal) return zone.offset(ms);
  // as `Date` (and so luxon) does: a fraction of a millisecond is cut off toward zero
  const at = Math.trunc(ms);
  let steady = cached.get(zone);
  if (!steady) cached.set(zone, (steady = { days: new Map(), hours: new Map() }));
  const day = steadyOffset(zone, steady.days, Math.floor(at / DAY), DAY);
  if (day !== null) return day;
  return steadyOffset(zone, steady.hours, Math.floor(at / HOUR), HOUR) ?? zone.offset(at);
}

function steadyOffset(zone: Zone, offsets: Map<number, number | null>, n: number, length: number): number | null {
  let offset = offsets.get(n);
  if (offset === undefined) {
    const first = zone.offset(n * length);
    offset = first === zone.offset(n * length + length - 1) ? first : null;
    if (offsets.size >= MAX_CACHED) offsets.clear();
    offsets.set(n, offset);
  }
  return offset;
}
