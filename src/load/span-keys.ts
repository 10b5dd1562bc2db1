import { quoteIdent, quoteLiteral } from './identifiers.js';
import { DUPLICATES_STAGING, stagedTables } from './staging.js';
import type { Row, TableSpec } from './table-spec.js';

/**
 * What a span knows of the keys it staged for a table:
 * - `unique`: no key was staged twice; every staged row is the latest of its key.
 * - `listed`: rows whose key may have been staged more than once are listed in {@link DUPLICATES_STAGING} by their
 *   `_seq`; the rows not listed have keys staged once.
 * A table the span knows nothing of (its staging was partly dropped, or it is staged with another table's rows
 * that are not `unique`) is absent: its rows are all treated as possible duplicates.
 */
export type StagedKeys = 'unique' | 'listed';

/** Marks a key whose first row is listed already. */
const LISTED = -1;

/** The keys of one staged table, by a 53-bit hash: rows whose hashes collide are listed, never dropped. */
class TableKeys {
  private first: Map<number, number> | undefined = new Map();
  readonly listed: number[] = [];

  constructor(private readonly key: readonly string[]) {}

  add(rows: ReadonlyArray<{ seq: number; row: Row }>): void {
    const first = this.first;
    if (!first) return;
    for (const { seq, row } of rows) {
      const hash = hashKey(row, this.key);
      const seen = first.get(hash);
      if (seen === undefined) {
        first.set(hash, seq);
        continue;
      }
      if (seen !== LISTED) {
        this.listed.push(seen);
        first.set(hash, LISTED);
      }
      this.listed.push(seq);
    }
  }

  forget(): void {
    this.first = undefined;
    this.listed.length = 0;
  }

  get state(): StagedKeys | undefined {
    if (!this.first) return undefined;
    return this.listed.length === 0 ? 'unique' : 'listed';
  }
}

/**
 * Follows the keys of a span's staged rows as they are appended, so that the merge sorts only the rows whose key
 * was staged more than once (a record seen twice in a span), not every staged row to find the latest of each key.
 * Memory: one map entry per staged row of the span, however long the backfill.
 */
export class SpanKeys {
  private readonly tables = new Map<string, TableKeys>();

  constructor(tables: readonly TableSpec[]) {
    for (const t of stagedTables(tables)) this.tables.set(t.name, new TableKeys(t.key));
  }

  add(table: string, rows: ReadonlyArray<{ seq: number; row: Row }>): void {
    this.tables.get(table)?.add(rows);
  }

  /** Staged rows were dropped: what was learnt of their keys no longer holds. */
  forget(): void {
    for (const keys of this.tables.values()) keys.forget();
  }

  /** The rows of {@link DUPLICATES_STAGING}: table name and `_seq`. */
  *listed(): Generator<[string, number]> {
    for (const [table, keys] of this.tables) for (const seq of keys.listed) yield [table, seq];
  }

  states(): Map<string, StagedKeys> {
    const states = new Map<string, StagedKeys>();
    for (const [table, keys] of this.tables) {
      const state = keys.state;
      if (state) states.set(table, state);
    }
    return states;
  }
}

/**
 * What is known of the keys of `spec`'s staged rows: its own, or for a table staged as a copy of another's rows,
 * `unique` when that table's are (a key that extends a unique key is unique).
 */
function stagedKeysOf(spec: TableSpec, tables: readonly TableSpec[], keys: ReadonlyMap<string, StagedKeys>): StagedKeys | undefined {
  const own = spec.stagedWith;
  if (!own) return keys.get(spec.name);
  const parent = tables.find((t) => t.name === own.table);
  const extendsParentKey = parent !== undefined && parent.key.every((k) => spec.key.includes(k));
  return own.kind === 'copy' && extendsParentKey && keys.get(own.table) === 'unique' ? 'unique' : undefined;
}

/**
 * SQL over `spec`'s staged rows (`rows`, read as `st`), split by what the span knows of their keys: `once(where)`
 * selects from the rows whose key came once (`where` is empty or narrows to them), `repeated(from)` from the rows
 * whose key may have come again (`from` reads as `st`). Both select the same columns, joined by `UNION ALL`.
 */
export function byKeyRepetition(
  spec: TableSpec,
  tables: readonly TableSpec[],
  keys: ReadonlyMap<string, StagedKeys>,
  rows: string,
  once: (where: string) => string,
  repeated: (from: string) => string,
): string {
  const known = stagedKeysOf(spec, tables, keys);
  if (known === 'unique') return once('');
  if (known === undefined) return repeated(rows);
  const listed = `EXISTS (SELECT 1 FROM ${quoteIdent(DUPLICATES_STAGING)} d WHERE d."table" = ${quoteLiteral(spec.name)} AND d."_seq" = st."_seq")`;
  return `${once(` WHERE NOT ${listed}`)} UNION ALL ${repeated(`(SELECT * FROM ${rows} st WHERE ${listed})`)}`;
}

/**
 * A 53-bit hash (cyrb53) of the values `row` holds for the columns `key`, each preceded by a mark that tells a
 * NULL from text. Two keys that hash alike are listed, so a collision costs a sort, never a row.
 */
export function hashKey(row: Row, key: readonly string[]): number {
  let h1 = 0xdeadbeef;
  let h2 = 0x41c6ce57;
  const mix = (c: number) => {
    h1 = Math.imul(h1 ^ c, 2654435761);
    h2 = Math.imul(h2 ^ c, 1597334677);
  };
  for (const column of key) {
    const value = row[column];
    if (value === null || value === undefined) {
      mix(0);
      continue;
    }
    mix(1);
    const text = typeof value === 'string' ? value : String(value);
    for (let i = 0; i < text.length; i++) mix(text.charCodeAt(i));
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  return 4294967296 * (2097151 & h2) + (h1 >>> 0);
}
