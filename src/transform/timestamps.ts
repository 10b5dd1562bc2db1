import { DateTime, FixedOffsetZone, IANAZone } from 'luxon';
import { RecordError } from './record-error.js';

// `2024-03-01 10:15:00`, `2024-03-01T10:15:00.000+0000`, `2024-03-01 10:15:00 UTC`, `... +02:00`, `...Z`
const SHAPE =
  /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?\s*(Z|[+-]\d{2}(?::?\d{2})?|[A-Za-z][A-Za-z0-9_/+-]*)?$/;

const ZONE_LABELS: Record<string, string> = { Z: 'UTC', UTC: 'UTC', GMT: 'UTC', UT: 'UTC' };

/**
 * Parses any timestamp shape the source sends and returns the instant in UTC, ISO 8601 with milliseconds.
 * Zone-less timestamps are read in `zone` (the source's business zone). A zone label may be `UTC`/`GMT`/`Z`,
 * a numeric offset (`+0000`, `+02:00`) or an IANA name. Anything else is a {@link RecordError}.
 *
 * @example
 * parseSourceTimestamp('2024-03-01 12:15:00', 'Europe/Athens') // '2024-03-01T10:15:00.000Z'
 * parseSourceTimestamp('2024-03-01T10:15:00.000+0000', 'Europe/Athens') // '2024-03-01T10:15:00.000Z'
 */
export function parseSourceTimestamp(text: string, zone: string, field = ''): string {
  const m = SHAPE.exec(text.trim());
  if (!m) throw new RecordError(field, `not a timestamp: ${JSON.stringify(text.slice(0, 60))}`);
  const [, y, mo, d, h, mi, s, frac, label] = m;
  const dtZone = label ? zoneOfLabel(label, field) : zone;
  const millis = frac ? Number(frac.padEnd(3, '0').slice(0, 3)) : 0;
  const parts = { year: +y!, month: +mo!, day: +d!, hour: +h!, minute: +mi!, second: s ? +s : 0, millisecond: millis };
  const fast = fromDayOffset(parts, dtZone);
  if (fast !== undefined) return fast;
  const dt = DateTime.fromObject(parts, { zone: dtZone });
  if (!dt.isValid || dt.day !== parts.day || dt.month !== parts.month) {
    throw new RecordError(field, `not a real date and time: ${JSON.stringify(text)}`);
  }
  const utc = dt.toUTC();
  if (utc.year < 1 || utc.year > 9999) throw new RecordError(field, `out of range (years 0001 to 9999 in UTC): ${JSON.stringify(text)}`);
  return `${utc.toISO({ includeOffset: false })}Z`;
}

type LocalParts = { year: number; month: number; day: number; hour: number; minute: number; second: number; millisecond: number };

/**
 * UTC offsets (minutes) of local days, by zone and day: `Europe/Athens 2024-03-01` → 120, or null for a day whose
 * offset changes (a clock change). Finding a zone's offset through `Intl` was the largest single cost of a load;
 * a source's timestamps fall on few distinct days.
 */
const dayOffsets = new Map<string, number | null>();
const MAX_DAYS = 100_000;

/**
 * The UTC instant of `parts` in `zone` from the offset of its local day, or undefined where that shortcut does not
 * give what luxon gives: a day whose offset changes (a clock change), a year outside 1000–9999, an hour, minute or
 * second out of range. Those go the long way.
 */
function fromDayOffset(parts: LocalParts, zone: string | FixedOffsetZone): string | undefined {
  const { year, month, day, hour, minute, second, millisecond } = parts;
  if (year < 1000 || year > 9999 || hour > 23 || minute > 59 || second > 59) return undefined;
  const key = `${typeof zone === 'string' ? zone : zone.name} ${year}-${month}-${day}`;
  let offset = dayOffsets.get(key);
  if (offset === undefined) {
    offset = steadyDayOffset(parts, zone);
    if (dayOffsets.size >= MAX_DAYS) dayOffsets.clear();
    dayOffsets.set(key, offset);
  }
  if (offset === null) return undefined;
  const utc = Date.UTC(year, month - 1, day, hour, minute, second, millisecond) - offset * 60_000;
  const iso = new Date(utc).toISOString();
  // years 1000-9999 in UTC keep the four-digit form; others are left to the long way's range check
  return iso.length === 24 ? iso : undefined;
}

/**
 * The offset of the local day of `parts` when it is a real day with the same offset at its first and last
 * instant and at noon (zones change their clocks at most once a day); else null.
 */
function steadyDayOffset(parts: LocalParts, zone: string | FixedOffsetZone): number | null {
  const at = (hour: number, minute: number, second: number, millisecond: number) => DateTime.fromObject({ year: parts.year, month: parts.month, day: parts.day, hour, minute, second, millisecond }, { zone });
  const times = [at(0, 0, 0, 0), at(12, 0, 0, 0), at(23, 59, 59, 999)];
  const real = (dt: DateTime) => dt.isValid && dt.year === parts.year && dt.month === parts.month && dt.day === parts.day;
  if (!times.every(real) || times.some((dt) => dt.offset !== times[0]!.offset)) return null;
  return times[0]!.offset;
}

function zoneOfLabel(label: string, field: string): string | FixedOffsetZone {
  const known = ZONE_LABELS[label.toUpperCase()];
  if (known) return known;
  if (/^[+-]/.test(label)) {
    const sign = label[0] === '-' ? -1 : 1;
    const digits = label.slice(1).replace(':', '');
    const minutes = Number(digits.slice(0, 2)) * 60 + Number(digits.slice(2) || '0');
    if (minutes > 18 * 60) throw new RecordError(field, `offset out of range: ${label}`);
    return FixedOffsetZone.instance(sign * minutes);
  }
  if (label.includes('/') && IANAZone.isValidZone(label)) return label;
  throw new RecordError(field, `unknown time zone label ${JSON.stringify(label)}`);
}

/** Validates a `YYYY-MM-DD` date and returns it unchanged. */
export function parseSourceDate(text: string, field = ''): string {
  const t = text.trim();
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(t);
  const dt = m ? DateTime.fromObject({ year: +m[1]!, month: +m[2]!, day: +m[3]! }, { zone: 'UTC' }) : undefined;
  if (!dt || !dt.isValid || dt.toISODate() !== t || dt.year < 1) throw new RecordError(field, `not a date YYYY-MM-DD: ${JSON.stringify(text.slice(0, 60))}`);
  return t;
}
