import { createHash } from 'node:crypto';

/**
 * A deterministic key from content: the first 24 hex digits of SHA-256 over the parts, each part
 * length-prefixed so that ('ab','c') and ('a','bc') differ. Used where the source gives no id.
 */
export function contentKey(...parts: Array<string | number | null>): string {
  const hash = createHash('sha256');
  for (const part of parts) {
    const text = part === null ? '\u0000null' : String(part);
    hash.update(`${Buffer.byteLength(text)}:`);
    hash.update(text);
  }
  return hash.digest('hex').slice(0, 24);
}

/**
 * JSON with object keys sorted at every level, so equal content gives equal text. A Map is written as the object
 * of its entries (its keys as text).
 */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  const members =
    value instanceof Map
      ? Array.from(value, ([k, v]) => [String(k), v] as [string, unknown])
      : Object.entries(value as Record<string, unknown>);
  const entries = members.filter(([, v]) => v !== undefined);
  entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
}
