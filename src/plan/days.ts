import { DateTime, Info, type Zone } from 'luxon';
import { offsetAt } from './zone-offsets.js';

/** A calendar day `YYYY-MM-DD`. Days are zone-free labels; a zone only matters when an instant is mapped to one. */
export type Day = string;

/** Milliseconds in a UTC day (a day label's arithmetic is on UTC midnights). */
export const DAY_MS = 86_400_000;

/**
 * `day` plus `n` days (n may be negative). Plain UTC arithmetic on the day's number, not luxon: a run plans the
 * directory's windows over the program's whole history, tens of thousands of these, and luxon's zone machinery made
 * that most of a run's CPU when there was nothing to load.
 */
export function addDays(day: Day, n: number): Day {
  return dayText(dayNumber(day) + n);
}

/** Whole days from `a` to `b` (positive when b is later). */
export function daysBetween(a: Day, b: Day): number {
  return dayNumber(b) - dayNumber(a);
}

const DAY_PATTERN = /^(\d{4})-(\d{2})-(\d{2})$/;

/**
 * Days since 1970-01-01 of a calendar day; a text that is not one (`2024-02-30`, `2024-1-5`) is refused.
 *
 * @example dayNumber('1970-01-02') // 1
 */
export function dayNumber(day: Day): number {
  const cached = dayNumbers.get(day);
  if (cached !== undefined) return cached;
  const parts = DAY_PATTERN.exec(day);
  // setUTCFullYear, not Date.UTC: the latter reads the years 0–99 as 1900–1999
  const date = new Date(0);
  if (parts) date.setUTCFullYear(Number(parts[1]), Number(parts[2]) - 1, Number(parts[3]));
  const days = date.getTime() / DAY_MS;
  if (!parts || dayText(days) !== day) throw new RangeError(`not a calendar day (YYYY-MM-DD): ${JSON.stringify(day)}`);
  if (dayNumbers.size >= MAX_CACHED) dayNumbers.clear();
  dayNumbers.set(day, days);
  return days;
}

/** The day `days` after 1970-01-01, as `YYYY-MM-DD` (years 0000–9999; outside them, luxon's ISO form). */
export function dayText(days: number): Day {
  let day = dayTexts.get(days);
  if (day === undefined) {
    day =
      days >= YEAR_0 && days <= LAST_DAY
        ? new Date(days * DAY_MS).toISOString().slice(0, 10)
        : DateTime.fromMillis(days * DAY_MS, { zone: 'UTC' }).toISODate()!;
    if (dayTexts.size >= MAX_CACHED) dayTexts.clear();
    dayTexts.set(days, day);
  }
  return day;
}

/** 0 for Monday … 6 for Sunday. */
export function weekday(day: Day): number {
  return (((dayNumber(day) + 3) % 7) + 7) % 7;
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
  return dayText(days);
}

/** Days since 1970-01-01 of 0001-01-01 and of 9999-12-31. */
const FIRST_DAY = -719_162;
const LAST_DAY = 2_932_896;
/** Days since 1970-01-01 of 0000-01-01. */
const YEAR_0 = -719_528;
const MAX_CACHED = 100_000;
const dayTexts = new Map<number, Day>();
const dayNumbers = new Map<Day, number>();
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
