/**
 * Members a record carries that the spec does not list: the service may add fields without notice (it has no
 * versioning), and a field dropped by the normalizer would be lost without a trace. They are kept on the row, as a
 * JSON object of their paths, and named once in `_etl_unlisted_fields`.
 */

/** The name of the JSON column every target table keeps its records' unlisted members in. */
export const UNLISTED = '_unlisted';

/** One unlisted member: its path in the record (`tier.colour`, `answers[].mood`) and its value as sent. */
export type UnlistedMember = readonly [path: string, value: unknown];

/**
 * The members of `object` whose names `listed` does not hold, each named `prefix + name`. Anything but an object
 * (null, an array, a text) has no members to find.
 *
 * @example unlistedMembers({ code: 'A', colour: 'red' }, new Set(['code']), 'voucher.') // [['voucher.colour', 'red']]
 */
export function unlistedMembers(object: unknown, listed: ReadonlySet<string>, prefix = ''): UnlistedMember[] {
  if (object === null || typeof object !== 'object' || Array.isArray(object)) return [];
  const out: UnlistedMember[] = [];
  // JSON.parse makes every member an own property, `__proto__` included: Object.entries lists them all
  for (const [name, value] of Object.entries(object)) if (!listed.has(name)) out.push([prefix + name, value]);
  return out;
}

/**
 * The `_unlisted` value of a row: a JSON object of the members by path, or null when there are none. A path taken
 * twice (a member of every wallet of a list collected on one row) keeps its first value.
 */
export function unlistedJson(members: readonly UnlistedMember[]): string | null {
  if (members.length === 0) return null;
  const kept = new Map<string, unknown>();
  for (const [path, value] of members) if (!kept.has(path)) kept.set(path, value);
  return `{${Array.from(kept, ([path, value]) => `${JSON.stringify(storable(path))}:${jsonValue(value)}`).join(',')}}`;
}

/** The paths an `_unlisted` value names (its JSON object's members), for the registry. */
export function unlistedPaths(json: string | number | null | undefined): string[] {
  if (typeof json !== 'string') return [];
  const parsed: unknown = JSON.parse(json);
  return parsed && typeof parsed === 'object' && !Array.isArray(parsed) ? Object.keys(parsed) : [];
}

/**
 * A value as JSON both warehouses store: texts and member names made well-formed, and a NUL in them written out
 * (PostgreSQL's jsonb cannot hold `\u0000`), as the rejects' messages write it.
 */
function jsonValue(value: unknown): string {
  return JSON.stringify(storableValue(value)) ?? 'null';
}

function storableValue(value: unknown): unknown {
  if (typeof value === 'string') return storable(value);
  if (Array.isArray(value)) return value.map(storableValue);
  // Object.fromEntries defines own members, so a member named `__proto__` stays a member
  if (value !== null && typeof value === 'object')
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [storable(k), storableValue(v)]));
  return value;
}

function storable(text: string): string {
  return text.toWellFormed().replaceAll('\u0000', '\\u0000');
}
