import type { ZoneClock } from './zone-clock.js';

const DAY_PATTERN = /^(\d{4})-(\d{2})-(\d{2})$/;

/** Days since 1970-01-01 of a `YYYY-MM-DD` text, or null when it is not a real calendar date. */
export function parseDay(text: string): number | null {
  const match = DAY_PATTERN.exec(text);
  if (!match) return null;
  const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])];
  const ms = Date.UTC(year, month - 1, day);
  const check = new Date(ms);
  if (check.getUTCFullYear() !== year || check.getUTCMonth() !== month - 1 || check.getUTCDate() !== day) return null;
  return ms / 86_400_000;
}

/** `YYYY-MM-DD` of a day number from {@link parseDay}. */
export function formatDay(dayNumber: number): string {
  // Civil-from-days (H. Hinnant): cheaper than a Date and a string slice on hot paths.
  const z = dayNumber + 719_468;
  const era = Math.floor(z / 146_097);
  const doe = z - era * 146_097;
  const yoe = Math.floor((doe - Math.floor(doe / 1460) + Math.floor(doe / 36_524) - Math.floor(doe / 146_096)) / 365);
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
  const mp = Math.floor((5 * doy + 2) / 153);
  const day = doy - Math.floor((153 * mp + 2) / 5) + 1;
  const month = mp < 10 ? mp + 3 : mp - 9;
  const year = yoe + era * 400 + (month <= 2 ? 1 : 0);
  return `${year}-${month < 10 ? '0' : ''}${month}-${day < 10 ? '0' : ''}${day}`;
}

/** An inclusive range of day indexes within the calendar. */
export interface DaySpan {
  first: number;
  last: number;
}

/**
 * The business days with data, [startDate, endDate] in the zone. Days are addressed by index (0 is
 * startDate); each day's start instant is precomputed so that day boundaries follow DST exactly
 * (a day may last 23, 24 or 25 hours).
 */
export class Calendar {
  /** Number of days in the range. */
  readonly dayCount: number;
  private readonly firstDay: number;
  private readonly starts: Float64Array;

  constructor(
    readonly clock: ZoneClock,
    startDate: string,
    endDate: string,
  ) {
    const first = parseDay(startDate);
    const last = parseDay(endDate);
    if (first === null || last === null || last < first) {
      throw new RangeError(`invalid data range ${startDate}..${endDate}`);
    }
    this.firstDay = first;
    this.dayCount = last - first + 1;
    this.starts = new Float64Array(this.dayCount + 1);
    for (let i = 0; i <= this.dayCount; i++) {
      const date = new Date((first + i) * 86_400_000);
      this.starts[i] = clock.startOfDay(date.getUTCFullYear(), date.getUTCMonth() + 1, date.getUTCDate());
    }
  }

  /** Start instant (ms) of day `index`; `dayCount` gives the end of the range. */
  dayStart(index: number): number {
    return this.starts[index]!;
  }

  /** Length of day `index` in whole seconds. */
  daySeconds(index: number): number {
    return (this.starts[index + 1]! - this.starts[index]!) / 1000;
  }

  /** Index of a `YYYY-MM-DD` day; may fall outside [0, dayCount). */
  indexOf(day: string): number {
    const parsed = parseDay(day);
    if (parsed === null) throw new RangeError(`not a date: ${day}`);
    return parsed - this.firstDay;
  }

  /** `YYYY-MM-DD` of day `index`. */
  dateOf(index: number): string {
    return formatDay(this.firstDay + index);
  }

  /** Index of the day containing instant `ms`: -1 before the range, `dayCount` after it. */
  indexAt(ms: number): number {
    if (ms < this.starts[0]!) return -1;
    if (ms >= this.starts[this.dayCount]!) return this.dayCount;
    let lo = 0;
    let hi = this.dayCount - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (this.starts[mid]! <= ms) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  }

  /** The part of [start, end] (inclusive `YYYY-MM-DD` days) that has data, or null when none does. */
  span(start: string, end: string): DaySpan | null {
    const first = Math.max(0, this.indexOf(start));
    const last = Math.min(this.dayCount - 1, this.indexOf(end));
    return first <= last ? { first, last } : null;
  }
}
