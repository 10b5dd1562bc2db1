import { DateTime, IANAZone } from 'luxon';

/** Milliseconds in a UTC day. */
export const DAY_MS = 86_400_000;
const HOUR_MS = 3_600_000;

/**
 * Wall-clock arithmetic in the business's time zone. Offsets come from luxon but are cached per UTC day,
 * because rendering a page of a thousand records must not cost thousands of zone lookups.
 */
export class ZoneClock {
  /** Offset (minutes) per UTC day number; NaN when the offset changes during that day. */
  private readonly offsets = new Map<number, number>();
  /** For UTC days with a change: [instant of the change, offset before, offset after]. */
  private readonly changes = new Map<number, [number, number, number]>();

  /** @param zone IANA zone name, e.g. `Europe/Athens`. Throws when the zone is unknown. */
  constructor(readonly zone: string) {
    if (!IANAZone.isValidZone(zone)) throw new RangeError(`unknown time zone "${zone}"`);
  }

  /** Offset of the zone from UTC at instant `ms`, in minutes. */
  offsetMinutes(ms: number): number {
    const utcDay = Math.floor(ms / DAY_MS);
    let offset = this.offsets.get(utcDay);
    if (offset === undefined) {
      const first = this.lookUp(utcDay * DAY_MS);
      const last = this.lookUp(utcDay * DAY_MS + DAY_MS - 1);
      offset = first === last ? first : Number.NaN;
      if (first !== last) {
        this.changes.set(utcDay, [
          this.firstInstantWithOffset(utcDay * DAY_MS, utcDay * DAY_MS + DAY_MS - 1, last),
          first,
          last,
        ]);
      }
      this.offsets.set(utcDay, offset);
    }
    if (!Number.isNaN(offset)) return offset;
    const [at, before, after] = this.changes.get(utcDay)!;
    return ms < at ? before : after;
  }

  /** The instant a calendar day starts in the zone (its first existing local instant). */
  startOfDay(year: number, month: number, day: number): number {
    return DateTime.fromObject({ year, month, day }, { zone: this.zone }).startOf('day').toMillis();
  }

  /** Local wall time of `ms` as `YYYY-MM-DD HH:MM:SS`. */
  formatLocal(ms: number): string {
    return formatWall(ms + this.offsetMinutes(ms) * 60_000).slice(0, 19);
  }

  /**
   * Whether the local wall time of `ms` also names another instant (the repeated hour when clocks go
   * back). Such a time cannot be served without a zone label and still be read back unambiguously.
   */
  isAmbiguousLocal(ms: number): boolean {
    const own = this.offsetMinutes(ms);
    const wall = ms + own * 60_000;
    for (const probe of [ms - 6 * HOUR_MS, ms + 6 * HOUR_MS]) {
      const other = this.offsetMinutes(probe);
      if (other !== own && this.offsetMinutes(wall - other * 60_000) === other) return true;
    }
    return false;
  }

  /** Instants (ms) at which the zone's offset changes during the given years, in order. */
  transitions(fromYear: number, toYear: number): number[] {
    const found: number[] = [];
    let day = Date.UTC(fromYear, 0, 1);
    const end = Date.UTC(toYear + 1, 0, 1);
    let before = this.offsetMinutes(day);
    for (; day < end; day += DAY_MS) {
      const after = this.offsetMinutes(day + DAY_MS);
      if (after !== before) found.push(this.firstInstantWithOffset(day, day + DAY_MS, after));
      before = after;
    }
    return found;
  }

  /** Bisects (lo, hi] for the first second whose offset is `target`. */
  private firstInstantWithOffset(lo: number, hi: number, target: number): number {
    while (hi - lo > 1000) {
      const mid = lo + Math.floor((hi - lo) / 2000) * 1000;
      if (this.lookUp(mid) === target) hi = mid;
      else lo = mid;
    }
    return hi;
  }

  private lookUp(ms: number): number {
    return DateTime.fromMillis(ms, { zone: this.zone }).offset;
  }
}

function pad(value: number, width: number): string {
  return String(value).padStart(width, '0');
}

/** `YYYY-MM-DD HH:MM:SS.mmm` of the UTC fields of `ms`. */
function formatWall(ms: number): string {
  const d = new Date(ms);
  return (
    `${pad(d.getUTCFullYear(), 4)}-${pad(d.getUTCMonth() + 1, 2)}-${pad(d.getUTCDate(), 2)} ` +
    `${pad(d.getUTCHours(), 2)}:${pad(d.getUTCMinutes(), 2)}:${pad(d.getUTCSeconds(), 2)}.${pad(d.getUTCMilliseconds(), 3)}`
  );
}

/** `YYYY-MM-DD HH:MM:SS` in UTC (without the label). */
export function formatUtcWall(ms: number): string {
  return formatWall(ms).slice(0, 19);
}

/** Loyalty posting shape `YYYY-MM-DDTHH:MM:SS.mmm+0000`. */
export function formatPostingTime(ms: number): string {
  return `${formatWall(ms).replace(' ', 'T')}+0000`;
}

/** ISO 8601 in UTC with milliseconds, the ground truth's timestamp form. */
export function isoUtc(ms: number): string {
  return new Date(ms).toISOString();
}
