import { hash } from 'node:crypto';

/**
 * A deterministic key from content: the first 24 hex digits of SHA-256 over the parts, each part
 * length-prefixed so that ('ab','c') and ('a','bc') differ. Used where the source gives no id.
 */
export function contentKey(...parts: Array<string | number | null>): string {
  // one text hashed at once: a third of the CPU of a Hash object fed part by part, the same digest (each part
  // follows an ASCII prefix, so its UTF-8 bytes are those it has alone, a lone surrogate's U+FFFD included)
  let content = '';
  for (const part of parts) {
    const text = part === null ? '\u0000null' : String(part);
    content += `${Buffer.byteLength(text)}:${text}`;
  }
  return hash('sha256', content, 'hex').slice(0, 24);
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
