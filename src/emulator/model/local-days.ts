import { formatDay } from './calendar.js';
import { DAY_MS, type ZoneClock } from './zone-clock.js';

const CACHED_DAYS = 20_000;

/**
 * Calendar days of the business's zone as day numbers (days since 1970-01-01, as {@link formatDay} reads
 * them), for rules that run on local dates: points that expire at the end of a month, vouchers valid
 * through a day, a yearly tier review. Day starts are cached, because a ground-truth dump asks for the same
 * few month ends millions of times.
 */
export class LocalDays {
  private readonly starts = new Map<number, number>();

  constructor(readonly clock: ZoneClock) {}

  /** The local day holding instant `ms`. */
  dayOf(ms: number): number {
    return Math.floor((ms + this.clock.offsetMinutes(ms) * 60_000) / DAY_MS);
  }

  /** The instant local day `day` starts (its first existing local instant). */
  startOf(day: number): number {
    let start = this.starts.get(day);
    if (start === undefined) {
      const date = new Date(day * DAY_MS);
      start = this.clock.startOfDay(date.getUTCFullYear(), date.getUTCMonth() + 1, date.getUTCDate());
      if (this.starts.size >= CACHED_DAYS) this.starts.clear();
      this.starts.set(day, start);
    }
    return start;
  }

  /** `YYYY-MM-DD` of local day `day`. */
  format(day: number): string {
    return formatDay(day);
  }

  /** The first day of the month after the month holding `day`. */
  static nextMonth(day: number): number {
    const date = new Date(day * DAY_MS);
    return Date.UTC(date.getUTCFullYear(), date.getUTCMonth() + 1, 1) / DAY_MS;
  }

  /** The same date `years` later (29 February becomes 1 March in a common year). */
  static addYears(day: number, years: number): number {
    const date = new Date(day * DAY_MS);
    return Date.UTC(date.getUTCFullYear() + years, date.getUTCMonth(), date.getUTCDate()) / DAY_MS;
  }
}
