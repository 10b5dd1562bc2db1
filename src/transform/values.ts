import { RecordError } from './record-error.js';

/**
 * Whether a text the source sent means a missing value: empty, or the word `NULL` in any case, with any spaces around
 * either. The spec writes "possibly null or the text NULL"; a service that spells it `null` or ` Null ` means the same,
 * and no value of any field the spec lists is that word.
 */
export function isMissingText(text: string): boolean {
  const t = text.trim();
  return t === '' || (t.length === 4 && t.toUpperCase() === 'NULL');
}

/**
 * The source writes a missing value as JSON null, the text `NULL` (any case, any spaces around: {@link isMissingText})
 * or an empty string; all are SQL NULL.
 * Numbers are accepted where text is expected (the spec shows a phone as a number) and kept as their text.
 */
export function cleanText(value: unknown, field = ''): string | null {
  if (value === null || value === undefined) return null;
  if (typeof value === 'number' || typeof value === 'bigint') return String(value);
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  if (typeof value !== 'string') throw new RecordError(field, `expected text, got ${describe(value)}`);
  if (isMissingText(value)) return null;
  return value.includes('\u0000') ? value.replaceAll('\u0000', '') : value;
}

/**
 * A source key (custom field name, question code or text) as the warehouse can hold it: unchanged, except
 * that NUL characters, which PostgreSQL text cannot store, are dropped, and a lone surrogate, which has no UTF-8
 * form (neither database takes it in JSON), becomes U+FFFD.
 */
export function cleanKey(key: string): string {
  return (key.includes('\u0000') ? key.replaceAll('\u0000', '') : key).toWellFormed();
}

/**
 * A JSON value as both warehouses can store it: every text and member name in it cleaned as {@link cleanKey}
 * cleans them. Its objects have no prototype, so every member name is data (`__proto__` included) wherever they
 * are read.
 */
export function storableJson(value: unknown): unknown {
  if (typeof value === 'string') return cleanKey(value);
  if (Array.isArray(value)) return value.map(storableJson);
  if (value === null || typeof value !== 'object') return value;
  const object: Record<string, unknown> = Object.create(null);
  for (const [name, member] of Object.entries(value)) object[cleanKey(name)] = storableJson(member);
  return object;
}

/**
 * Named text values (custom fields, answers) as the JSON object a record stages them in, of well-formed text
 * only: a lone surrogate, which has no UTF-8 form, becomes U+FFFD as it does in any other column. A name given
 * twice keeps its last value. The names are held in a Map and written out one by one, never as members of a
 * plain object, where `__proto__` would be lost.
 */
export function stagedObject(entries: Iterable<readonly [string, string | null]>): string {
  const members = new Map<string, string | null>();
  for (const [name, value] of entries) members.set(name.toWellFormed(), value?.toWellFormed() ?? null);
  let json = '';
  for (const [name, value] of members) json += `,${JSON.stringify(name)}:${JSON.stringify(value)}`;
  return `{${json.slice(1)}}`;
}

/** Largest magnitude a DECIMAL(18,4) column holds. */
const DECIMAL_LIMIT = 1e14;

/** A number for a DECIMAL(18,4) column, as exact decimal text with at most 4 fraction digits. */
export function cleanDecimal(value: unknown, field = ''): string | null {
  if (value === null || value === undefined) return null;
  let n: number;
  if (typeof value === 'number') n = value;
  else if (typeof value === 'string') {
    const t = value.trim();
    if (isMissingText(t)) return null;
    if (!/^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(t))
      throw new RecordError(field, `not a number: ${JSON.stringify(t.slice(0, 40))}`);
    n = Number(t);
  } else throw new RecordError(field, `expected a number, got ${describe(value)}`);
  if (!Number.isFinite(n) || Math.abs(n) >= DECIMAL_LIMIT)
    throw new RecordError(field, `number out of range: ${String(value).slice(0, 40)}`);
  const fixed = n.toFixed(4);
  return fixed === '-0.0000' ? '0.0000' : fixed;
}

/** A whole number for an INTEGER column. */
export function cleanInteger(value: unknown, field = ''): number | null {
  if (value === null || value === undefined) return null;
  if (typeof value === 'string' && isMissingText(value)) return null;
  const n = typeof value === 'string' ? Number(value) : value;
  if (typeof n !== 'number' || !Number.isInteger(n) || Math.abs(n) > 2_147_483_647) {
    throw new RecordError(field, `expected a whole number, got ${JSON.stringify(value)?.slice(0, 40)}`);
  }
  return n;
}

/**
 * A Boolean for a BOOLEAN column, as `true`/`false` text: JSON true/false, or that text in any case, or `1`/`0` (a
 * source that sends its booleans as strings); missing values are NULL.
 */
export function cleanBoolean(value: unknown, field = ''): 'true' | 'false' | null {
  if (value === null || value === undefined) return null;
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  if (typeof value === 'string') {
    if (isMissingText(value)) return null;
    const t = value.trim().toLowerCase();
    if (t === 'true' || t === 'false') return t;
    if (t === '1' || t === '0') return t === '1' ? 'true' : 'false';
  }
  throw new RecordError(field, `expected true or false, got ${JSON.stringify(value)?.slice(0, 40)}`);
}

function describe(value: unknown): string {
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? 'an object' : typeof value;
}
