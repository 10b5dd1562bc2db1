import { IANAZone } from 'luxon';

/**
 * Zones with clock changes of an hour, half an hour (Lord Howe), at midnight (São Paulo), a skipped day (Apia),
 * Ramadan switches (Casablanca), offsets of seconds in their early history (Amsterdam, Monrovia) and none at all.
 */
export const ZONES_WITH_CHANGES = [
  'UTC',
  'Europe/Athens',
  'Europe/London',
  'Europe/Amsterdam',
  'America/New_York',
  'America/Sao_Paulo',
  'Asia/Kolkata',
  'Asia/Kathmandu',
  'Australia/Lord_Howe',
  'Pacific/Chatham',
  'Pacific/Apia',
  'Pacific/Kiritimati',
  'Africa/Casablanca',
  'Africa/Monrovia',
];

/** The instants (to the millisecond) `zone` changed its offset, 1890 to 2040, found through luxon's `Intl` offsets. */
export function zoneChanges(zone: string): number[] {
  const z = IANAZone.create(zone);
  const found: number[] = [];
  const step = 7 * 86_400_000;
  for (let t = Date.UTC(1890, 0, 1); t < Date.UTC(2040, 0, 1); t += step) {
    if (z.offset(t) === z.offset(t + step)) continue;
    let [lo, hi] = [t, t + step];
    while (hi - lo > 1) {
      const mid = Math.floor((lo + hi) / 2);
      if (z.offset(mid) === z.offset(t)) lo = mid;
      else hi = mid;
    }
    found.push(hi);
  }
  return found;
}
