import { MAX_CHANGES, type CustomerTimeline } from './customer-timeline.js';

/** Marks "no further change" in {@link ChangeLog.changeDays}. */
export const NO_CHANGE = 0xffff;

// An event is packed into one float64: seconds-of-day (< 2^17) above customer * 4 + version (< 2^34),
// so sorting the numbers sorts by time, and every key stays an exact integer below 2^53.
const LOW = 2 ** 34;

/** A decoded entry of the change log. */
export interface ChangeEvent {
  customer: number;
  version: number;
  second: number;
}

/**
 * Every profile change of every customer, sorted by day and, within a day, by time. About 10 bytes per
 * change, built in two passes without per-customer objects, so that an emulator of a million customers
 * starts without a wait.
 */
export class ChangeLog {
  /** Change day of (customer, version) at `customer * 4 + version`; {@link NO_CHANGE} when absent. */
  readonly changeDays: Uint16Array;
  /** `offsets[d]..offsets[d + 1]` are the positions of day `d`'s events in `keys`. */
  readonly offsets: Uint32Array;
  private readonly keys: Float64Array;

  constructor(timeline: CustomerTimeline) {
    const days = timeline.calendar.dayCount;
    if (days >= NO_CHANGE) throw new RangeError('the emulator supports at most 65534 days of data');
    this.changeDays = new Uint16Array(timeline.size * MAX_CHANGES).fill(NO_CHANGE);
    const seconds = new Uint32Array(timeline.size * MAX_CHANGES);
    const perDay = new Uint32Array(days + 1);
    for (let i = 0; i < timeline.size; i++) {
      const schedule = timeline.schedule(i);
      for (let v = 0; v < schedule.days.length; v++) {
        const day = schedule.days[v]!;
        this.changeDays[i * MAX_CHANGES + v] = day;
        seconds[i * MAX_CHANGES + v] = schedule.seconds[v]!;
        perDay[day + 1]!++;
      }
    }
    this.offsets = perDay;
    for (let d = 1; d <= days; d++) this.offsets[d]! += this.offsets[d - 1]!;
    this.keys = new Float64Array(this.offsets[days]!);
    const cursor = this.offsets.slice(0, days);
    for (let slot = 0; slot < this.changeDays.length; slot++) {
      const day = this.changeDays[slot]!;
      if (day === NO_CHANGE) continue;
      this.keys[cursor[day]!++] = seconds[slot]! * LOW + slot;
    }
    for (let d = 0; d < days; d++) this.keys.subarray(this.offsets[d]!, this.offsets[d + 1]!).sort();
  }

  /** Number of changes in the whole range. */
  get size(): number {
    return this.keys.length;
  }

  /** The event at `position` (positions of one day are in time order). */
  event(position: number): ChangeEvent {
    const key = this.keys[position]!;
    const slot = key % LOW;
    return { customer: Math.floor(slot / MAX_CHANGES), version: slot % MAX_CHANGES, second: (key - slot) / LOW };
  }

  /** Whether the change at `position` is the customer's last one on or before day `lastDay`. */
  isLastThrough(position: number, lastDay: number): boolean {
    const slot = this.keys[position]! % LOW;
    const version = slot % MAX_CHANGES;
    if (version === MAX_CHANGES - 1) return true;
    const next = this.changeDays[slot + 1]!;
    return next === NO_CHANGE || next > lastDay;
  }

  /** Latest version of customer `i` changed on or before day `lastDay` (-1 when not yet created). */
  versionThrough(i: number, lastDay: number): number {
    let version = -1;
    for (let v = 0; v < MAX_CHANGES; v++) {
      const day = this.changeDays[i * MAX_CHANGES + v]!;
      if (day === NO_CHANGE || day > lastDay) break;
      version = v;
    }
    return version;
  }
}
