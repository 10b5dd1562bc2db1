import { DateTime } from 'luxon';

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
