import type { Day } from '../plan/days.js';

const DAY_MS = 86_400_000;

/**
 * Days since 1970-01-01 of a day `YYYY-MM-DD`. The page places thousands of windows; plain arithmetic on UTC
 * midnights is exact for zone-free day labels and much cheaper than a calendar library per window.
 *
 * @example dayNumber('1970-01-02') // 1
 */
export function dayNumber(day: Day): number {
  return Math.round(Date.parse(`${day}T00:00:00Z`) / DAY_MS);
}

/** The day `n` days after 1970-01-01. */
export function dayOfNumber(n: number): Day {
  return new Date(n * DAY_MS).toISOString().slice(0, 10);
}

/** 0 for Monday … 6 for Sunday. */
export function weekday(day: Day): number {
  return (new Date(`${day}T00:00:00Z`).getUTCDay() + 6) % 7;
}
