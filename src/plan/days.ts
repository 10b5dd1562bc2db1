import { DateTime, Info, type Zone } from 'luxon';
import { offsetAt } from './zone-offsets.js';

/** A calendar day `YYYY-MM-DD`. Days are zone-free labels; a zone only matters when an instant is mapped to one. */
export type Day = string;

/** `day` plus `n` days (n may be negative). */
export function addDays(day: Day, n: number): Day {
  return DateTime.fromISO(day, { zone: 'UTC' }).plus({ days: n }).toISODate()!;
}

/** Whole days from `a` to `b` (positive when b is later). */
export function daysBetween(a: Day, b: Day): number {
  return Math.round(DateTime.fromISO(b, { zone: 'UTC' }).diff(DateTime.fromISO(a, { zone: 'UTC' }), 'days').days);
}

/** The day an instant falls on in `zone`. */
export function dayOfInstant(isoInstant: string, zone: string): Day {
  return DateTime.fromISO(isoInstant, { zone: 'UTC' }).setZone(zone).toISODate()!;
}

/**
 * The day `ms` falls on in `zone`, as luxon reads it (`DateTime.fromMillis(ms, { zone }).toISODate()`); a day before
 * year 1 or after 9999 there (an instant at the edge of the calendar) is the calendar's first or last day, which
 * both warehouses hold. Read once per record: the zone's offset comes from {@link offsetAt}'s cache, not `Intl`.
 */
export function dayOfMillis(ms: number, zone: string): Day {
  const named = zoneNamed(zone);
  // luxon's wall clock of an instant (tsToObj): the offset in minutes, then a `Date`, which truncates the millis
  const local = Math.trunc(ms + offsetAt(ms, named) * 60 * 1000);
  if (!Number.isFinite(local)) throw new Error(`no day for the instant ${ms} in ${zone}`);
  const days = Math.floor(local / DAY_MS);
  if (days < FIRST_DAY) return '0001-01-01';
  if (days > LAST_DAY) return '9999-12-31';
  let day = dayTexts.get(days);
  if (day === undefined) {
    day = new Date(days * DAY_MS).toISOString().slice(0, 10);
    if (dayTexts.size >= MAX_CACHED) dayTexts.clear();
    dayTexts.set(days, day);
  }
  return day;
}

const DAY_MS = 86_400_000;
/** Days since 1970-01-01 of 0001-01-01 and of 9999-12-31. */
const FIRST_DAY = -719_162;
const LAST_DAY = 2_932_896;
const MAX_CACHED = 100_000;
const dayTexts = new Map<number, Day>();
const zones = new Map<string, Zone>();

function zoneNamed(name: string): Zone {
  let zone = zones.get(name);
  if (zone === undefined) {
    zone = Info.normalizeZone(name);
    if (!zone.isValid) throw new Error(`unknown time zone ${JSON.stringify(name)}`);
    if (zones.size < 1000) zones.set(name, zone);
  }
  return zone;
}

/** The last day that has ended in `zone` at `now`: yesterday there. */
export function lastClosedDay(zone: string, now: Date = new Date()): Day {
  return DateTime.fromJSDate(now).setZone(zone).minus({ days: 1 }).toISODate()!;
}

export function minDay(a: Day, b: Day): Day {
  return a < b ? a : b;
}

export function maxDay(a: Day, b: Day): Day {
  return a > b ? a : b;
}
