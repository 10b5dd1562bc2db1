import { ZoneClock, formatUtcWall } from '../model/zone-clock.js';

/**
 * Zones whose abbreviations the `'abbreviations'` reading writes, with their standard offset (minutes) and
 * their standard and summer abbreviations. Every one names a single offset: no IST or CST here.
 */
const LABEL_ZONES: ReadonlyArray<{ zone: string; standard: number; abbreviations: readonly [string, string] }> = [
  { zone: 'Europe/Athens', standard: 120, abbreviations: ['EET', 'EEST'] },
  { zone: 'Europe/Berlin', standard: 60, abbreviations: ['CET', 'CEST'] },
  { zone: 'Europe/London', standard: 0, abbreviations: ['GMT', 'BST'] },
  { zone: 'Europe/Lisbon', standard: 0, abbreviations: ['WET', 'WEST'] },
];

const SERVED = /^(\d{4})-(\d{2})-(\d{2}) (\d{2}):(\d{2}):(\d{2})( UTC)?$/;

/**
 * Rewrites the served timestamps of accounts, surveys and the loyalty state (`YYYY-MM-DD HH:MM:SS`, local in
 * the business's zone, or followed by ` UTC`) with other zone labels naming the same instant. Which label a
 * timestamp gets is a function of its instant alone, so a re-read serves the same text.
 */
export class ZoneLabels {
  private readonly clocks: ZoneClock[];

  constructor(
    private readonly mode: 'utc' | 'abbreviations' | 'offsets',
    private readonly clock: ZoneClock,
  ) {
    this.clocks =
      mode === 'abbreviations'
        ? LABEL_ZONES.map(({ zone }) => (zone === clock.zone ? clock : new ZoneClock(zone)))
        : [];
  }

  /** The same instant as `served`, labelled the reading's way; anything that is no served timestamp is kept. */
  relabel(served: unknown): unknown {
    if (this.mode === 'utc' || typeof served !== 'string') return served;
    const match = SERVED.exec(served);
    if (!match) return served;
    const [, y, mo, d, h, mi, s, utc] = match;
    const wall = Date.UTC(Number(y), Number(mo) - 1, Number(d), Number(h), Number(mi), Number(s));
    const ms = utc ? wall : this.localInstant(wall);
    const pick = Math.floor(ms / 1000) % 7;
    if (this.mode === 'offsets') {
      if (pick < 2) return `${formatUtcWall(ms).replace(' ', 'T')}Z`;
      const offset = this.clock.offsetMinutes(ms);
      const local = this.clock.formatLocal(ms);
      const sign = offset < 0 ? '-' : '+';
      const hours = String(Math.floor(Math.abs(offset) / 60)).padStart(2, '0');
      const minutes = String(Math.abs(offset) % 60).padStart(2, '0');
      return pick < 5 ? `${local.replace(' ', 'T')}${sign}${hours}:${minutes}` : `${local}${sign}${hours}${minutes}`;
    }
    if (pick === 6) return `${formatUtcWall(ms)} GMT`;
    const index = pick % LABEL_ZONES.length;
    const { standard, abbreviations } = LABEL_ZONES[index]!;
    const clock = this.clocks[index]!;
    const summer = clock.offsetMinutes(ms) !== standard;
    return `${clock.formatLocal(ms)} ${abbreviations[summer ? 1 : 0]}`;
  }

  /** The instant of a zone-less local wall time (served ones never fall in a repeated or skipped hour). */
  private localInstant(wall: number): number {
    const first = wall - this.clock.offsetMinutes(wall) * 60_000;
    const offset = this.clock.offsetMinutes(first);
    return wall - offset * 60_000;
  }
}
