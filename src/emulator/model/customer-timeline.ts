import type { Calendar } from './calendar.js';
import { Stream, randomFor } from './random.js';

/** Most changes a customer can have: the creation and up to three later modifications. */
export const MAX_CHANGES = 4;

/** When a customer's profile changed: version `v` happened on `days[v]` at `seconds[v]` after that day's start. */
export interface ChangeSchedule {
  /** Day indexes, strictly increasing; `days[0]` is the creation day. */
  days: number[];
  /** Seconds since the start of the matching day. */
  seconds: number[];
}

/**
 * Who exists when. Customers are created in index order, spread evenly over the calendar (creation
 * instants are monotone in the index), and about half change again on 1–3 later days.
 */
export class CustomerTimeline {
  constructor(
    readonly seed: number,
    readonly size: number,
    readonly calendar: Calendar,
  ) {}

  /** First customer index created on day `dayIndex` or later (`size` when none). */
  firstCreatedOn(dayIndex: number): number {
    const days = this.calendar.dayCount;
    if (dayIndex <= 0) return 0;
    if (dayIndex >= days) return this.size;
    return Math.floor((dayIndex * this.size + days - 1) / days);
  }

  /** Day index on which customer `i` was created. */
  creationDay(i: number): number {
    return Math.floor((i * this.calendar.dayCount) / this.size);
  }

  /** The change schedule of customer `i`. */
  schedule(i: number): ChangeSchedule {
    const random = randomFor(this.seed, Stream.customerTimeline, i);
    const created = this.creationDay(i);
    const first = this.firstCreatedOn(created);
    const count = this.firstCreatedOn(created + 1) - first;
    // Slots keep creation instants monotone in the index, so "created before t" is a prefix of customers.
    const seconds = [Math.floor(((i - first + random.next()) / count) * this.calendar.daySeconds(created))];
    const days = [created];
    const later = this.calendar.dayCount - 1 - created;
    if (later > 0 && random.chance(0.5)) {
      const wanted = Math.min(random.int(1, MAX_CHANGES - 1), later);
      const chosen = new Set<number>();
      while (chosen.size < wanted) chosen.add(created + random.int(1, later));
      for (const day of [...chosen].sort(ascending)) {
        days.push(day);
        seconds.push(random.int(0, this.calendar.daySeconds(day) - 1));
      }
    }
    return { days, seconds };
  }

  /** Instant (ms) of change `version` in a schedule. */
  changeInstant(schedule: ChangeSchedule, version: number): number {
    return this.calendar.dayStart(schedule.days[version]!) + schedule.seconds[version]! * 1000;
  }
}

function ascending(a: number, b: number): number {
  return a - b;
}
