import { constants } from 'node:fs';
import { chmod, copyFile, lstat, rename, rm } from 'node:fs/promises';
import type { DuckDBConnection } from '@duckdb/node-api';
import type { AnalystsPolicy } from '../../plan/job-plan.js';
import type { AnalystCopyRewrite } from '../destination.js';
import { qualified, quoteIdent, quoteLiteral } from '../warehouse/identifiers.js';
import { NEVER_FOR_ANALYSTS } from '../catalog/warehouse-catalog.js';
import { analystNote, analystValue, isWithheld } from '../derived/personal-data.js';
import { describeWithheldViewColumns, rebindHashedViews } from './copy-descriptions.js';
import { dropFromCopy, leftOutOfCopy, scopedShape, type CopiedRelation } from './copy-scope.js';
import { duckdbDialect } from '../warehouse/warehouse-dialect.js';
import {
  fingerprint,
  keyCheckOf,
  readLedger,
  readShape,
  tableKey,
  writeLedger,
  type Fingerprint,
  type LedgerRow,
  type TablePrint,
  type SourceShape,
  type SourceTable,
} from './copy-ledger.js';
import { withDuckDb } from './duckdb-connection.js';
import { mismatch, nameOf } from './previous-copy.js';

/** What the DuckDB that rewrites the copy may hold before it spills beside the copy. */
const REWRITE_MEMORY = '64MB';

/** The vectors (of 2,048 rows) a publish deletes from in one table at most: its delete ids stay well within {@link REWRITE_MEMORY}. */
const MAX_DELETED_VECTORS = 1000;

/**
 * Rewrites the DuckDB file `file` (a snapshot of the warehouse) as analysts may read it under `policy`: every table's
 * rows, with phone, e-mail, names and birthdate hashed or NULL (`personal-data.ts`), and the views and macros as
 * they were. Under `hash` a personal column that is not text (birthdate) becomes text.
 *
 * Written into a new file rather than updated in place: DuckDB leaves the blocks a rewrite frees in the file, and
 * the clear values with them. The new file starts, when it can, from `previous` (the copy published before, which
 * never held a clear value: a kernel copy of it), and only the tables whose rows changed since are written again —
 * of a table with `_window_start`, only the windows whose rows changed, unless they hold most of it. What changed is
 * told by fingerprints ({@link fingerprint}: row count and the sum of the rows' hashes, of each table and each of its
 * windows, read from the snapshot whatever wrote the warehouse), kept in the copy's `_etl_published_tables`.
 * Anything else — no previous copy, one that cannot be opened or says nothing of how it was written, another
 * policy or key, a table added or whose columns, types or comments changed, any change of views or macros, a copy
 * grown to more free space than data — and the copy is written whole, as a full rewrite would; the outcome says why.
 */
export async function rewriteForAnalysts(
  file: string,
  policy: AnalystsPolicy,
  previous?: string,
): Promise<AnalystCopyRewrite | undefined> {
  if (policy.personalData === 'keep') return undefined;
  if (policy.personalData === 'hash' && !policy.key)
    throw new Error('personal data is to be hashed, but no key was given');
  const raw = `${file}.raw`;
  const spill = `${file}.spill`;
  await rename(file, raw);
  try {
    const started = performance.now();
    const { shape, prints, keyCheck, leftOut } = await withScratch(spill, async (conn) => {
      await conn.run(`ATTACH ${quoteLiteral(raw)} AS src (READ_ONLY)`);
      // the pipeline's own tables stay out of the analysts' way unless they are asked for
      const leftOut = await leftOutOfCopy(conn, 'src', policy.pipelineTables === true);
      const shape = scopedShape(await readShape(conn, 'src', policy), leftOut);
      const prints = new Map<string, TablePrint>();
      for (const [key, table] of shape.tables) prints.set(key, await fingerprint(conn, 'src', table));
      const keyCheck = await keyCheckOf(conn, policy);
      await conn.run('DETACH src');
      return { shape, prints, keyCheck, leftOut };
    });
    const fingerprintSeconds = (performance.now() - started) / 1000;
    const ledger: LedgerRow[] = [];
    for (const [key, t] of shape.tables) {
      const common = {
        schema: t.schema,
        table: t.table,
        definitionHash: t.definitionHash,
        personalData: policy.personalData,
        keyCheck,
        catalogHash: shape.catalogHash,
      };
      const print = prints.get(key)!;
      ledger.push({ ...common, ...print.total });
      for (const [part, p] of print.parts ?? []) ledger.push({ ...common, part, ...p });
    }
    let why = 'no copy was published before';
    if (previous !== undefined) {
      const outcome = await incrementalRewrite({ raw, file, spill, previous, policy, shape, prints, ledger });
      if (typeof outcome !== 'string') return { ...outcome, fingerprintSeconds };
      why = outcome;
      await rm(file, { force: true });
      await rm(`${file}.wal`, { force: true });
    }
    await wholeRewrite(raw, file, spill, policy, shape, ledger, leftOut);
    return {
      how: 'whole',
      why,
      tables: shape.tables.size,
      written: [...shape.tables.values()].map(nameOf),
      rowsWritten: Number([...prints.values()].reduce((sum, p) => sum + p.total.rows, 0n)),
      dropped: [],
      fingerprintSeconds,
    };
  } catch (error) {
    await rm(file, { force: true });
    await rm(`${file}.wal`, { force: true });
    throw error;
  } finally {
    await rm(raw, { force: true });
    await rm(spill, { recursive: true, force: true });
  }
}

/** Runs `fn` on a DuckDB of its own, in memory, bounded as a publish must be (one thread, spilling to `spill`). */
function withScratch<T>(spill: string, fn: (conn: DuckDBConnection) => Promise<T>): Promise<T> {
  // the rewrite is one transaction over the whole warehouse: unbounded (DuckDB's default is most of the machine's
  // memory), it held what it wrote until the commit, and a publish took memory in proportion to the warehouse
  return withDuckDb(':memory:', { memory_limit: REWRITE_MEMORY, temp_directory: spill, threads: '1' }, fn);
}

/** The copy written anew from the snapshot: its schema, views and macros, then every table's rows. */
async function wholeRewrite(
  raw: string,
  file: string,
  spill: string,
  policy: AnalystsPolicy,
  shape: SourceShape,
  ledger: readonly LedgerRow[],
  leftOut: readonly CopiedRelation[],
): Promise<void> {
  await withScratch(spill, async (conn) => {
    await conn.run(`ATTACH ${quoteLiteral(raw)} AS src (READ_ONLY)`);
    await conn.run(`ATTACH ${quoteLiteral(file)} AS dst`);
    await conn.run('COPY FROM DATABASE src TO dst (SCHEMA)');
    for (const table of NEVER_FOR_ANALYSTS)
      for (const schema of new Set([...shape.tables.values()].map((t) => t.schema)))
        await conn.run(`DROP TABLE IF EXISTS dst.${qualified(schema, table)}`);
    await conn.run('BEGIN');
    await dropFromCopy(conn, 'dst', leftOut);
    for (const table of shape.tables.values()) {
      const target = `dst.${qualified(table.schema, table.table)}`;
      for (const c of table.columns) {
        if (!isWithheld(policy, table.table, c.name)) continue;
        // a withheld column may read NULL where the warehouse's may not (a reject's payload)
        if (!c.nullable) await conn.run(`ALTER TABLE ${target} ALTER ${quoteIdent(c.name)} DROP NOT NULL`);
        if (policy.personalData === 'hash' && c.type !== 'VARCHAR' && c.type !== 'JSON')
          await conn.run(`ALTER TABLE ${target} ALTER ${quoteIdent(c.name)} SET DATA TYPE VARCHAR`);
        // its description says what the copy holds: a hash is text, whatever the warehouse's type
        if (c.comment !== null)
          await conn.run(
            `COMMENT ON COLUMN ${target}.${quoteIdent(c.name)} IS ${duckdbDialect.commentLiteral(c.comment + analystNote(policy, table.table, c.name))}`,
          );
      }
      await insertAnalystRows(conn, policy, table);
    }
    await rebindHashedViews(conn, 'dst', policy);
    await describeWithheldViewColumns(conn, 'dst', policy);
    // a warehouse's own table of the ledger's name (none is made) is not carried into the copy in its place
    await finishCopy(conn, ledger);
  });
}

/** The copy's fingerprints written with its rows, committed together, and the copy made durable before it is let go. */
async function finishCopy(conn: DuckDBConnection, ledger: readonly LedgerRow[]): Promise<void> {
  await writeLedger(conn, 'dst', ledger);
  await conn.run('COMMIT');
  await conn.run('CHECKPOINT dst');
  await conn.run('DETACH dst');
  await conn.run('DETACH src');
}

/** Writes the rows of the warehouse's `table` into the copy's, as analysts may read them. */
async function insertAnalystRows(
  conn: DuckDBConnection,
  policy: AnalystsPolicy,
  table: SourceTable,
  where = '',
): Promise<void> {
  const names = table.columns.map((c) => quoteIdent(c.name)).join(', ');
  const values = table.columns
    .map((c) => analystValue(duckdbDialect, policy, table.table, c.name, `s.${quoteIdent(c.name)}`, '$1'))
    .join(', ');
  const prepared = await conn.prepare(
    `INSERT INTO dst.${qualified(table.schema, table.table)} (${names}) SELECT ${values} FROM src.${qualified(table.schema, table.table)} s${where}`,
  );
  if (values.includes('$1')) prepared.bindVarchar(1, policy.key!);
  await prepared.run();
}

/**
 * The copy started from the previous one, with only the tables that changed written again. Returns why it could
 * not be when it could not (the caller then writes the copy whole); `file` is then to be deleted.
 */
async function incrementalRewrite(options: {
  raw: string;
  file: string;
  spill: string;
  previous: string;
  policy: AnalystsPolicy;
  shape: SourceShape;
  prints: ReadonlyMap<string, TablePrint>;
  ledger: readonly LedgerRow[];
}): Promise<Omit<AnalystCopyRewrite, 'fingerprintSeconds'> | string> {
  const { raw, file, spill, previous, policy, shape, prints, ledger } = options;
  const before = await lstat(previous).catch((error: NodeJS.ErrnoException) => error);
  if (before instanceof Error)
    return before.code === 'ENOENT' ? 'no copy was published before' : `the previous copy: ${before.message}`;
  if (!before.isFile()) return 'the previous copy is not a regular file';
  try {
    // a clone where the file system shares blocks, else a copy in the kernel; the copy is written to, the previous
    // one (read-only) never
    await copyFile(previous, file, constants.COPYFILE_FICLONE | constants.COPYFILE_EXCL);
    await chmod(file, 0o600);
    return await withScratch(spill, async (conn) => {
      try {
        await conn.run(`ATTACH ${quoteLiteral(file)} AS dst`);
      } catch (error) {
        return `the previous copy cannot be opened: ${(error as Error).message.split('\n')[0]}`;
      }
      // the blocks a table written again frees are reused by later publishes, not returned: a copy grown to twice
      // what it holds is written whole once, compact again
      const [size] = (
        await conn.runAndReadAll(
          `SELECT used_blocks, free_blocks FROM pragma_database_size() WHERE database_name = 'dst'`,
        )
      ).getRowObjectsJson() as Array<{ used_blocks: string; free_blocks: string }>;
      if (size && Number(size.free_blocks) > Number(size.used_blocks))
        return `the previous copy is more free space than data (${size.free_blocks} free blocks, ${size.used_blocks} used): written whole to compact it`;
      let recorded: LedgerRow[];
      try {
        recorded = await readLedger(conn, 'dst');
      } catch {
        return 'the previous copy does not say what it was written from (written under keep, or before copies kept their fingerprints)';
      }
      const wholes = recorded.filter((r) => r.part === undefined);
      const problem = await mismatch(conn, policy, shape, ledger, wholes);
      if (problem !== undefined) return problem;
      const was = new Map(wholes.map((r) => [tableKey(r.schema, r.table), r]));
      const wasParts = new Map<string, Map<string | null, Fingerprint>>();
      for (const r of recorded)
        if (r.part !== undefined) {
          const key = tableKey(r.schema, r.table);
          wasParts.set(key, (wasParts.get(key) ?? new Map<string | null, Fingerprint>()).set(r.part, r));
        }
      const written: string[] = [];
      const dropped: string[] = [];
      let rowsWritten = 0n;
      await conn.run(`ATTACH ${quoteLiteral(raw)} AS src (READ_ONLY)`);
      await conn.run('BEGIN');
      for (const [key, row] of was)
        if (!shape.tables.has(key)) {
          await conn.run(`DROP TABLE dst.${qualified(row.schema, row.table)}`);
          dropped.push(nameOf(row));
        }
      for (const [key, table] of shape.tables) {
        const old = was.get(key)!;
        const now = prints.get(key)!;
        if (same(old, now.total)) continue;
        written.push(nameOf(table));
        const parts = changedParts(wasParts.get(key) ?? new Map(), now);
        // a window at a time while few changed; the table afresh when most did (its file blocks all reused)
        if (
          parts !== undefined &&
          parts.values.length > 0 &&
          parts.rows * 2n <= now.total.rows &&
          (await rewriteParts(conn, policy, table, parts.values))
        ) {
          rowsWritten += parts.rows;
          continue;
        }
        rowsWritten += now.total.rows;
        await recreateTable(conn, table);
        await insertAnalystRows(conn, policy, table);
      }
      await finishCopy(conn, ledger);
      return {
        how: 'incremental' as const,
        tables: shape.tables.size,
        written,
        rowsWritten: Number(rowsWritten),
        dropped,
      };
    });
  } catch (error) {
    return `the previous copy could not be updated: ${(error as Error).message.split('\n')[0]}`;
  }
}

const same = (a: Fingerprint, b: Fingerprint) => a.rows === b.rows && a.contentHash === b.contentHash;

/**
 * The windows of a partitioned table whose rows changed since the previous copy (its fingerprint differs, or it is
 * new, or gone) and the rows they now hold; undefined for a table fingerprinted whole.
 */
function changedParts(
  was: ReadonlyMap<string | null, Fingerprint>,
  now: TablePrint,
): { values: Array<string | null>; rows: bigint } | undefined {
  if (now.parts === undefined) return undefined;
  const values: Array<string | null> = [];
  let rows = 0n;
  for (const [part, print] of now.parts) {
    const old = was.get(part);
    if (old !== undefined && same(old, print)) continue;
    values.push(part);
    rows += print.rows;
  }
  for (const part of was.keys()) if (!now.parts.has(part)) values.push(part);
  return { values, rows };
}

/**
 * Writes again the rows of the copy's `table` in the windows `parts`: deleted, then inserted from the snapshot.
 * Returns false, having written nothing, when their rows lie across too much of the table: DuckDB holds delete ids
 * for every vector a transaction deletes from, however few of its rows go, so windows spread over a large table
 * would take the memory a publish is bounded by; such a table is written afresh instead.
 */
async function rewriteParts(
  conn: DuckDBConnection,
  policy: AnalystsPolicy,
  table: SourceTable,
  parts: ReadonlyArray<string | null>,
): Promise<boolean> {
  const column = quoteIdent(table.partition!);
  const dates = parts.filter((p): p is string => p !== null);
  const test = (alias: string) =>
    [
      ...(dates.length ? [`${alias}${column} IN (${dates.map((d) => `DATE ${quoteLiteral(d)}`).join(', ')})`] : []),
      ...(dates.length < parts.length ? [`${alias}${column} IS NULL`] : []),
    ].join(' OR ');
  const target = `dst.${qualified(table.schema, table.table)}`;
  const [spread] = (
    await conn.runAndReadAll(`SELECT COUNT(DISTINCT rowid // 2048) AS vectors FROM ${target} WHERE ${test('')}`)
  ).getRowObjectsJson() as Array<{ vectors: string }>;
  if (Number(spread!.vectors) > MAX_DELETED_VECTORS) return false;
  await conn.run(`DELETE FROM ${target} WHERE ${test('')}`);
  await insertAnalystRows(conn, policy, table, ` WHERE ${test('s.')}`);
  return true;
}

/**
 * Drops the copy's `table` and makes it again as it was, empty: its DDL as DuckDB gives it, then its comments.
 * Dropped rather than emptied: DuckDB reuses a dropped table's blocks, where deleted rows kept the file growing.
 */
async function recreateTable(conn: DuckDBConnection, table: SourceTable): Promise<void> {
  const where = `database_name = 'dst' AND schema_name = ${quoteLiteral(table.schema)} AND table_name = ${quoteLiteral(table.table)}`;
  const [made] = (
    await conn.runAndReadAll(`SELECT sql, comment FROM duckdb_tables() WHERE ${where}`)
  ).getRowObjectsJson() as Array<{ sql: string; comment: string | null }>;
  const comments = (
    await conn.runAndReadAll(`SELECT column_name, comment FROM duckdb_columns() WHERE ${where} ORDER BY column_index`)
  ).getRowObjectsJson() as Array<{ column_name: string; comment: string | null }>;
  const target = `dst.${qualified(table.schema, table.table)}`;
  await conn.run(`DROP TABLE ${target}`);
  // the DDL names the table alone: made in the copy's schema of that name
  await conn.run(`USE dst.${quoteIdent(table.schema)}`);
  try {
    await conn.run(made!.sql);
  } finally {
    await conn.run('USE memory');
  }
  const [again] = (
    await conn.runAndReadAll(`SELECT sql FROM duckdb_tables() WHERE ${where}`)
  ).getRowObjectsJson() as Array<{ sql: string }>;
  if (again?.sql !== made!.sql) throw new Error(`${nameOf(table)} could not be made again as it was`);
  if (made!.comment !== null)
    await conn.run(`COMMENT ON TABLE ${target} IS ${duckdbDialect.commentLiteral(made!.comment)}`);
  for (const c of comments)
    if (c.comment !== null)
      await conn.run(
        `COMMENT ON COLUMN ${target}.${quoteIdent(c.column_name)} IS ${duckdbDialect.commentLiteral(c.comment)}`,
      );
}
