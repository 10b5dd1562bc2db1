import { FixedOffsetZone, IANAZone, type Zone } from 'luxon';
import { DAY_MS } from '../plan/days.js';
import { offsetAt } from '../plan/zone-offsets.js';
import { RecordError } from './record-error.js';
import { AMBIGUOUS_ABBREVIATIONS, ZONE_ABBREVIATIONS } from './zone-abbreviations.js';

// `2024-03-01 10:15:00`, `2024-03-01T10:15:00.000+0000`, `2024-03-01 10:15:00 UTC`, `... +02:00`, `...Z`
const SHAPE =
  /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?\s*(Z|[+-]\d{2}(?::?\d{2})?|[A-Za-z][A-Za-z0-9_/+:-]*)?$/;
/** The spec's month-name style (an integration's `created`): `Mar 4, 2021 3:07:12 PM`, a zone label may follow. */
const MONTH_NAME =
  /^([A-Za-z]{3})\s+(\d{1,2}),\s*(\d{4})\s+(\d{1,2}):(\d{2})(?::(\d{2}))?\s*([AaPp])\.?[Mm]\.?(?:\s+(\S+))?$/;
const MONTHS = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];
/** A bare `YYYY-MM-DD` where a timestamp is expected: the day's start, midnight in the source's zone. */
const BARE_DATE = /^\d{4}-\d{2}-\d{2}$/;
/** `UTC+2`, `GMT-05:30`, `UTC+0200`: an offset written after UTC or GMT. */
const UTC_OFFSET = /^(?:UTC|GMT)([+-])(\d{1,2})(?::?(\d{2}))?$/i;

const ZONE_LABELS: Record<string, string> = { Z: 'UTC', UTC: 'UTC', GMT: 'UTC', UT: 'UTC' };

/**
 * Parses any timestamp shape the source sends and returns the instant in UTC, ISO 8601 with milliseconds.
 * Zone-less timestamps are read in `zone` (the source's business zone), and so is a bare date `YYYY-MM-DD` (its
 * midnight there). A zone label may be `UTC`/`GMT`/`Z`, a numeric offset (`+0000`, `+02:00`, `+02`, `UTC+2`), an
 * abbreviation of {@link ZONE_ABBREVIATIONS} (`EET`, `CEST`) or an IANA name. An ambiguous abbreviation (`IST`,
 * `CST`) and anything else is a {@link RecordError}.
 *
 * @example
 * parseSourceTimestamp('2024-03-01 12:15:00', 'Europe/Athens') // '2024-03-01T10:15:00.000Z'
 * parseSourceTimestamp('2024-03-01T10:15:00.000+0000', 'Europe/Athens') // '2024-03-01T10:15:00.000Z'
 * parseSourceTimestamp('Mar 4, 2021 3:07:12 PM', 'UTC') // '2021-03-04T15:07:12.000Z' (the month-name style)
 */
export function parseSourceTimestamp(text: string, zone: string, field = ''): string {
  const trimmed = text.trim();
  const numeric = MONTH_NAME.test(trimmed) ? fromMonthName(trimmed, text, field) : trimmed;
  const m = SHAPE.exec(BARE_DATE.test(numeric) ? `${numeric} 00:00:00` : numeric);
  if (!m) throw new RecordError(field, `not a timestamp: ${JSON.stringify(text.slice(0, 60))}`);
  const [, y, mo, d, h, mi, s, frac, label] = m;
  const dtZone = label ? zoneOfLabel(label, field) : zone;
  const millis = frac ? Number(frac.padEnd(3, '0').slice(0, 3)) : 0;
  const parts = { year: +y!, month: +mo!, day: +d!, hour: +h!, minute: +mi!, second: s ? +s : 0, millisecond: millis };
  if (parts.month < 1 || parts.month > 12 || parts.day < 1 || parts.hour > 23 || parts.minute > 59 || parts.second > 59)
    throw notReal(text, field);
  const tz = typeof dtZone === 'string' ? IANAZone.create(dtZone) : dtZone;
  if (!tz.isValid) throw notReal(text, field);
  // a day of the calendar (not a 30 February, which the clock arithmetic would move to March)
  if (parts.day > daysInMonth(parts.year, parts.month)) throw notReal(text, field);
  const local = wallClockMillis(parts);
  let utc = fromDayOffset(local, tz);
  if (utc === undefined) {
    utc = wallClockToUtc(local, tz);
    // on a day of a clock change: the clock must not have skipped past the day (a day the zone left out)
    if (!showsDay(utc + offsetAt(utc, tz) * MINUTE, parts)) throw notReal(text, field);
  }
  const iso = new Date(utc).toISOString();
  // four-digit years only: years before 0001 or after 9999 (in UTC) have no ISO form here nor a place in the warehouse
  if (iso.length !== 24 || iso.startsWith('0000'))
    throw new RecordError(field, `out of range (years 0001 to 9999 in UTC): ${JSON.stringify(text)}`);
  return iso;
}

/**
 * `Mar 4, 2021 3:07:12 PM` as `2021-03-04 15:07:12`, its zone label kept: 12 AM is midnight and 12 PM noon, and an
 * hour outside 1–12 or an unknown month is no time of the style.
 */
function fromMonthName(trimmed: string, text: string, field: string): string {
  const [, mon, d, y, h, mi, s, half, label] = MONTH_NAME.exec(trimmed)!;
  const month = MONTHS.indexOf(mon!.toLowerCase()) + 1;
  const hour12 = Number(h);
  if (month === 0 || hour12 < 1 || hour12 > 12) throw notReal(text, field);
  const hour = (hour12 % 12) + (half!.toLowerCase() === 'p' ? 12 : 0);
  const two = (n: number | string) => String(n).padStart(2, '0');
  return `${y}-${two(month)}-${two(d!)} ${two(hour)}:${mi}:${s ?? '00'}${label ? ` ${label}` : ''}`;
}

function notReal(text: string, field: string): RecordError {
  return new RecordError(field, `not a real date and time: ${JSON.stringify(text)}`);
}

type LocalParts = {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
  millisecond: number;
};

const MINUTE = 60_000;

/** Whether the wall clock `local` (as UTC millis) falls on the day of `parts`. */
function showsDay(local: number, parts: LocalParts): boolean {
  const date = new Date(local);
  return date.getUTCDate() === parts.day && date.getUTCMonth() + 1 === parts.month;
}

/**
 * The wall clock of `parts` (a real day) as if it were UTC, by the proleptic Gregorian calendar as `Date` counts
 * it, with years 0-99 as they are (`Date.UTC` would move them to the 1900s), without a `Date` per timestamp.
 */
function wallClockMillis(parts: LocalParts): number {
  return (
    daysFromCivil(parts.year, parts.month, parts.day) * DAY_MS +
    ((parts.hour * 60 + parts.minute) * 60 + parts.second) * 1000 +
    parts.millisecond
  );
}

/** Days from 1970-01-01 to a day of the proleptic Gregorian calendar (H. Hinnant's `days_from_civil`). */
function daysFromCivil(year: number, month: number, day: number): number {
  const y = month <= 2 ? year - 1 : year;
  const era = Math.floor(y / 400);
  const yearOfEra = y - era * 400;
  const dayOfYear = Math.floor((153 * (month + (month > 2 ? -3 : 9)) + 2) / 5) + day - 1;
  const dayOfEra = yearOfEra * 365 + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100) + dayOfYear;
  return era * 146_097 + dayOfEra - 719_468;
}

/**
 * The UTC instant a wall clock `local` (as UTC millis) shows in `zone`. The offsets a day before and a day after
 * are the only ones it can have (zones change their clocks at most once a day): each gives an instant, kept when
 * the zone shows that clock then. Both (a clock that repeats): the earlier. Neither (a clock that skipped it): read
 * with the offset before the change, which lands as far past the change as the clock was.
 */
function wallClockToUtc(local: number, zone: Zone): number {
  const before = offsetAt(local - DAY_MS, zone);
  const after = offsetAt(local + DAY_MS, zone);
  const shows = (offset: number) => offsetAt(local - offset * MINUTE, zone) === offset;
  if (shows(before)) return local - before * MINUTE;
  if (after !== before && shows(after)) return local - after * MINUTE;
  return local - before * MINUTE;
}

/**
 * UTC offsets (minutes) of local days, by zone and day number (days since 1970-01-01 on the wall clock), or null
 * for a day a clock change may fall in. Finding a zone's offset through `Intl` was the largest single cost of a
 * load; a source's timestamps fall on comparatively few distinct days.
 */
const dayOffsets = new Map<Zone, Map<number, number | null>>();
const MAX_DAYS = 100_000;

/** The UTC instant of `local` in `zone` from the offset of its local day, or undefined on a day of a clock change. */
function fromDayOffset(local: number, zone: Zone): number | undefined {
  if (zone instanceof FixedOffsetZone) return local - zone.offset(local) * MINUTE;
  let days = dayOffsets.get(zone);
  if (!days) dayOffsets.set(zone, (days = new Map()));
  const day = Math.floor(local / DAY_MS);
  let offset = days.get(day);
  if (offset === undefined) {
    offset = steadyDayOffset(day * DAY_MS, zone);
    if (days.size >= MAX_DAYS) days.clear();
    days.set(day, offset);
  }
  return offset === null ? undefined : local - offset * MINUTE;
}

/**
 * The offset of the local day starting at wall clock `midnight` when no clock change can fall in it; else null.
 * Offsets lie within ±14 h, so the day lies between the instants 14 h before `midnight` read as UTC and 14 h after
 * its end: the same offset there and in between (clocks change at most once a day) leaves no room for a change.
 */
function steadyDayOffset(midnight: number, zone: Zone): number | null {
  const first = offsetAt(midnight - 14 * 3_600_000, zone);
  const middle = offsetAt(midnight + DAY_MS / 2 - first * MINUTE, zone);
  const last = offsetAt(midnight + DAY_MS + 14 * 3_600_000, zone);
  return first === middle && middle === last ? first : null;
}

/** The zone of each label read so far: a source writes few distinct labels, so each is worked out once. */
const labelZones = new Map<string, string | FixedOffsetZone>();
const MAX_LABELS = 1000;

function zoneOfLabel(label: string, field: string): string | FixedOffsetZone {
  const hit = labelZones.get(label);
  if (hit !== undefined) return hit;
  const zone = readZoneLabel(label, field);
  if (labelZones.size < MAX_LABELS) labelZones.set(label, zone);
  return zone;
}

function readZoneLabel(label: string, field: string): string | FixedOffsetZone {
  const known = ZONE_LABELS[label.toUpperCase()];
  if (known) return known;
  if (/^[+-]/.test(label)) {
    const sign = label[0] === '-' ? -1 : 1;
    const digits = label.slice(1).replace(':', '');
    const minutes = Number(digits.slice(0, 2)) * 60 + Number(digits.slice(2) || '0');
    if (minutes > 18 * 60) throw new RecordError(field, `offset out of range: ${label}`);
    return FixedOffsetZone.instance(sign * minutes);
  }
  const abbreviation = ZONE_ABBREVIATIONS.get(label.toUpperCase());
  if (abbreviation !== undefined) return FixedOffsetZone.instance(abbreviation);
  const ambiguous = AMBIGUOUS_ABBREVIATIONS.get(label.toUpperCase());
  if (ambiguous)
    throw new RecordError(field, `ambiguous time zone label ${JSON.stringify(label)}: it may mean ${ambiguous}`);
  const utcOffset = UTC_OFFSET.exec(label);
  if (utcOffset) {
    const minutes = Number(utcOffset[2]) * 60 + Number(utcOffset[3] ?? '0');
    if (minutes > 18 * 60) throw new RecordError(field, `offset out of range: ${label}`);
    return FixedOffsetZone.instance((utcOffset[1] === '-' ? -1 : 1) * minutes);
  }
  if (label.includes('/') && IANAZone.isValidZone(label)) return label;
  throw new RecordError(field, `unknown time zone label ${JSON.stringify(label)}`);
}

/** Validates a `YYYY-MM-DD` date (years 0001–9999, proleptic Gregorian) and returns it unchanged. */
export function parseSourceDate(text: string, field = ''): string {
  const t = text.trim();
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(t);
  if (m) {
    const [year, month, day] = [Number(m[1]), Number(m[2]), Number(m[3])];
    if (year >= 1 && month >= 1 && month <= 12 && day >= 1 && day <= daysInMonth(year, month)) return t;
  }
  throw new RecordError(field, `not a date YYYY-MM-DD: ${JSON.stringify(text.slice(0, 60))}`);
}

function daysInMonth(year: number, month: number): number {
  if (month !== 2) return [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1]!;
  return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0 ? 29 : 28;
}
