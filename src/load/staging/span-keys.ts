import { quoteIdent, quoteLiteral } from '../warehouse/identifiers.js';
import type { WarehouseDialect } from '../warehouse/warehouse-dialect.js';
import { DUPLICATES_STAGING, stagedTables } from './staging.js';
import type { Row, TableSpec } from '../table-spec.js';

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
/** Stands for the hash 0, which marks an empty slot: above every hash (they are below 2^53) and exact in a double. */
const HASH_ZERO = 2 ** 53;

/**
 * The first `_seq` of each key hash a table staged: an open-addressing table (linear probing, at most three
 * quarters full) in two typed arrays, so a span of a million rows holds no object per row for the garbage
 * collector to trace, and no boxed 53-bit number either.
 */
class FirstSeqs {
  private hashes = new Float64Array(1024);
  private seqs = new Float64Array(1024);
  private size = 0;

  /** Stores `seq` as the first of `hash` and returns undefined; or, for a hash stored already, marks it {@link LISTED} and returns what it held. */
  claim(hash: number, seq: number): number | undefined {
    const h = hash === 0 ? HASH_ZERO : hash;
    const i = slotOf(this.hashes, h);
    if (this.hashes[i] === h) {
      const seen = this.seqs[i]!;
      this.seqs[i] = LISTED;
      return seen;
    }
    this.hashes[i] = h;
    this.seqs[i] = seq;
    if (++this.size * 4 > this.hashes.length * 3) this.grow();
    return undefined;
  }

  private grow(): void {
    const { hashes, seqs } = this;
    this.hashes = new Float64Array(hashes.length * 2);
    this.seqs = new Float64Array(hashes.length * 2);
    for (let j = 0; j < hashes.length; j++) {
      if (hashes[j] === 0) continue;
      const i = slotOf(this.hashes, hashes[j]!);
      this.hashes[i] = hashes[j]!;
      this.seqs[i] = seqs[j]!;
    }
  }
}

/** The slot of `hashes` (a power of two long, never full) that holds `h`, or the empty one where it goes. */
function slotOf(hashes: Float64Array, h: number): number {
  const mask = hashes.length - 1;
  let i = (h >>> 0) & mask;
  while (hashes[i] !== 0 && hashes[i] !== h) i = (i + 1) & mask;
  return i;
}

/** The keys of one staged table, by a 53-bit hash: rows whose hashes collide are listed, never dropped. */
class TableKeys {
  private first: FirstSeqs | undefined = new FirstSeqs();
  readonly listed: number[] = [];

  constructor(private readonly key: readonly string[]) {}

  add(rows: ReadonlyArray<{ seq: number; row: Row }>): void {
    const first = this.first;
    if (!first) return;
    for (const { seq, row } of rows) {
      const seen = first.claim(hashKey(row, this.key), seq);
      if (seen === undefined) continue;
      if (seen !== LISTED) this.listed.push(seen);
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
 * Memory: 21 to 43 bytes per staged row of the span (outside the JavaScript heap), however long the backfill.
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
 * What is known of the keys of `spec`'s staged rows, and the table whose rows {@link DUPLICATES_STAGING} lists for
 * them: its own; or, for a table staged as a copy of another's rows or as the entries of another's objects, its
 * parent's, when `spec`'s key extends the parent's (and, for entries, holds the entry's name). A copy has one row
 * per parent row, and an object's entries have distinct names (`stagedObject`), so the rows of a parent whose key
 * came once have keys that came once.
 */
function stagedKeysOf(
  spec: TableSpec,
  tables: readonly TableSpec[],
  keys: ReadonlyMap<string, StagedKeys>,
): { state: StagedKeys; listedAs: string } | undefined {
  const own = spec.stagedWith;
  if (!own) {
    const state = keys.get(spec.name);
    return state && { state, listedAs: spec.name };
  }
  const parent = tables.find((t) => t.name === own.table);
  if (!parent || !parent.key.every((k) => spec.key.includes(k))) return undefined;
  if (own.kind === 'rows' || (own.kind === 'entries' && !spec.key.includes(own.nameColumn))) return undefined;
  const state = keys.get(own.table);
  return state && { state, listedAs: own.table };
}

/**
 * SQL over `spec`'s staged rows (`rows`, read as `st`), split by what the span knows of their keys: `once(where)`
 * selects from the rows whose key came once (`where` is empty or narrows to them), `repeated(from)` from the rows
 * whose key may have come again (`from` reads as `st`). Both select the same columns, joined by `UNION ALL`.
 * The listed rows are found with `IN`, not a correlated `EXISTS`: DuckDB decorrelates that one here by first copying
 * every staged row, all of its columns, into memory.
 */
export function byKeyRepetition(
  dialect: WarehouseDialect,
  spec: TableSpec,
  tables: readonly TableSpec[],
  keys: ReadonlyMap<string, StagedKeys>,
  rows: string,
  once: (where: string) => string,
  repeated: (from: string) => string,
): string {
  const known = stagedKeysOf(spec, tables, keys);
  if (known?.state === 'unique') return once('');
  if (known === undefined) return repeated(rows);
  const listed = `(SELECT d."_seq" FROM ${quoteIdent(DUPLICATES_STAGING)} d WHERE d."table" = ${quoteLiteral(known.listedAs)})`;
  return `${once(` WHERE ${dialect.notAmong('st."_seq"', listed)}`)} UNION ALL ${repeated(`(SELECT * FROM ${rows} st WHERE st."_seq" IN ${listed})`)}`;
}

/**
 * A 53-bit hash (cyrb53) of the values `row` holds for the columns `key`, each preceded by a mark that tells a
 * NULL from text. Two keys that hash alike are listed, so a collision costs a sort, never a row.
 */
export function hashKey(row: Row, key: readonly string[]): number {
  let h1 = 0xdeadbeef;
  let h2 = 0x41c6ce57;
  for (const column of key) {
    const value = row[column];
    const missing = value === null || value === undefined;
    h1 = Math.imul(h1 ^ (missing ? 0 : 1), 2654435761);
    h2 = Math.imul(h2 ^ (missing ? 0 : 1), 1597334677);
    if (missing) continue;
    const text = typeof value === 'string' ? value : String(value);
    for (let i = 0; i < text.length; i++) {
      const c = text.charCodeAt(i);
      h1 = Math.imul(h1 ^ c, 2654435761);
      h2 = Math.imul(h2 ^ c, 1597334677);
    }
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  return 4294967296 * (2097151 & h2) + (h1 >>> 0);
}
