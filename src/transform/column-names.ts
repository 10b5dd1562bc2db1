import { createHash } from 'node:crypto';

/** Longest sanitized name body kept before a hash suffix takes over; keeps names well under 63 bytes. */
const MAX_BODY = 40;

/**
 * Lower snake case ASCII for a source key: accents folded, every other run of characters becomes `_`.
 *
 * @example
 * snakeCase('Favourite Store') // 'favourite_store'
 * snakeCase('Ünïcödé naam')    // 'unicode_naam'
 */
export function snakeCase(key: string): string {
  return key
    .normalize('NFKD')
    .replace(/\p{M}+/gu, '')
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '_')
    .replace(/^_+|_+$/g, '');
}

/** Eight hex digits of SHA-256 of the original key: the stable suffix that tells colliding names apart. */
export function keySuffix(key: string): string {
  return createHash('sha256').update(key).digest('hex').slice(0, 8);
}

/**
 * The column name for a pivoted source key. The plain form is `prefix + snake_case(key)`; a key whose
 * plain form is empty or too long, or already taken by another key, gets `_` + {@link keySuffix}.
 * `taken` holds every column name already used in the table.
 */
export function pivotColumnName(prefix: string, key: string, taken: ReadonlySet<string>): string {
  const body = snakeCase(key);
  const plain = `${prefix}${body}`;
  if (body.length > 0 && body.length <= MAX_BODY && !taken.has(plain)) return plain;
  const base = `${prefix}${body.slice(0, MAX_BODY) || 'key'}_${keySuffix(key)}`;
  let name = base;
  for (let n = 2; taken.has(name); n++) name = `${base}_${n}`;
  return name;
}
