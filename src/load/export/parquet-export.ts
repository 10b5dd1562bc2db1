import {
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmdirSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import type { AnalystsPolicy } from '../../plan/job-plan.js';
import { exportSelectList, exportedColumns, holdKey, keyCheckOf } from './export-policy.js';
import { qualified, quoteIdent, quoteLiteral } from '../warehouse/identifiers.js';
import { ExportPathError } from '../warehouse/warehouse-errors.js';
import { copyThroughDuckDb, duckdbTypeOf, type ExportConnection } from './postgres-to-parquet.js';
import { NEVER_FOR_ANALYSTS } from '../catalog/warehouse-catalog.js';

export { duckdbTypeOf, type ExportConnection } from './postgres-to-parquet.js';

/**
 * The columns that partition a data table by month, first present wins: a day or instant every row has and that
 * grows with time, so a new night touches the last months only. Tables with none of them, and the pipeline's own
 * `_etl_` tables, are one file each.
 */
export const PARTITION_COLUMNS = ['posted_at', 'answered_at', 'received_at', 'valid_from'] as const;

/** The types a partition column may have: an instant (its UTC month) or a day. */
const PARTITION_TYPES = new Set(['TIMESTAMP WITH TIME ZONE', 'DATE']);

/** What the in-memory DuckDB that writes PostgreSQL's rows may hold before it spills to disk. */
const SCRATCH_MEMORY = '256MB';

/** The folder name of a partition whose month column is NULL, as Hive and Spark spell it. */
const NULL_MONTH = '__HIVE_DEFAULT_PARTITION__';

export interface ExportedFile {
  /** Relative to the export folder, `/`-separated. */
  path: string;
  /** `YYYY-MM`, or absent for an unpartitioned table (or NULL for rows whose month column is NULL). */
  month?: string | null;
  rows: number;
  /** The latest `_loaded_at` of its rows (ISO text as the warehouse gives it), where the table has that column. */
  maxLoadedAt: string | null;
  /** An order-independent sum of a hash of every row's text: a changed, added or removed row changes it. */
  fingerprint: string;
}

export interface ExportedTable {
  name: string;
  partitionedBy: string | null;
  /** Column names and their Parquet (DuckDB) types, in table order. */
  columns: Array<{ name: string; type: string }>;
  rows: number;
  files: ExportedFile[];
}

export interface ExportManifest {
  format: 'parquet';
  warehouse: 'duckdb' | 'postgres';
  schema: string;
  exportedAt: string;
  /** What the files hold of personal data: `keep` (in clear), `hash` or `drop` (destination.analysts.personal_data). */
  personalData: AnalystsPolicy['personalData'];
  /** Under `hash`: a fixed text hashed under the key, so a later export with another salt writes every file again. */
  keyCheck: string | null;
  tables: ExportedTable[];
}

export interface ExportResult {
  manifest: ExportManifest;
  written: number;
  skipped: number;
  deleted: number;
}

/** A warehouse as the export reads it: its tables, and one read-only snapshot of them. */
export interface ExportSource {
  readonly name: 'duckdb' | 'postgres';
  readonly schema: string;
  /** Every table (not view) of the schema, its columns with the warehouse's type names, in table order. */
  tables(): Promise<Array<{ name: string; columns: Array<{ name: string; type: string }> }>>;
  /** Runs `fn` in one read-only transaction: every table read as of one moment. */
  snapshot<T>(fn: (conn: ExportConnection) => Promise<T>): Promise<T>;
}

/** Why `dir` cannot hold an export, or undefined when it can (absent folders are made). */
export function exportDirProblem(dir: string): string | undefined {
  if (!existsSync(dir)) return undefined;
  const stat = lstatSync(dir);
  if (stat.isSymbolicLink()) return `${dir} is a symbolic link; give the folder itself`;
  if (!stat.isDirectory()) return `${dir} is a file, not a folder`;
  return undefined;
}

/**
 * Writes every table of the warehouse as Parquet under `dir`, with `dir/manifest.json`. A partition (or a whole
 * unpartitioned table) whose row count and fingerprint match the previous manifest, with its file still there, is
 * not written again; a partition that no longer has rows is deleted. Every file goes to a temporary name in its
 * own folder and is renamed over the old one, so a reader sees the old file or the new one, never half of one.
 * The warehouse is only read, in one transaction: the export is one consistent moment. Phone, e-mail, names,
 * birthdate and whole records are written as `policy` says (`destination.analysts.personal_data`): hashed, NULL, or
 * in clear under `keep`; the table holding the hashing key is never written.
 */
export async function exportParquet(
  source: ExportSource,
  dir: string,
  policy: AnalystsPolicy = { personalData: 'keep' },
): Promise<ExportResult> {
  const root = resolve(dir);
  const problem = exportDirProblem(root);
  if (problem) throw new ExportPathError(problem);
  mkdirSync(root, { recursive: true });
  const previous = readPreviousManifest(root);
  const tables = (await source.tables()).filter((t) => !NEVER_FOR_ANALYSTS.has(t.name));
  let keyCheck: string | null = null;
  for (const t of tables)
    if (!/^[A-Za-z0-9_]+$/.test(t.name))
      throw new ExportPathError(`table ${JSON.stringify(t.name)}: its name cannot be a folder name of the export`);

  // a month of PostgreSQL rows gathers in DuckDB before it is written: past SCRATCH_MEMORY it spills into DIR/.tmp
  const spill = source.name === 'postgres' ? dirname(safeTarget(root, '.tmp/spill')) : undefined;
  const memory = spill
    ? await DuckDBInstance.create(':memory:', { memory_limit: SCRATCH_MEMORY, temp_directory: spill, threads: '1' })
    : undefined;
  const scratch = memory ? await memory.connect() : undefined;
  if (scratch) await scratch.run(`SET TimeZone = 'UTC'`);
  let written = 0;
  let skipped = 0;
  const exported: ExportedTable[] = [];
  try {
    await source.snapshot(async (conn) => {
      keyCheck = keyCheckOf(await holdKey(conn, source.name, source.schema, policy));
      // files written under another policy or key hold other values for the same rows: every one is written again
      const samePolicy = previous?.personalData === policy.personalData && (previous.keyCheck ?? null) === keyCheck;
      for (const table of tables) {
        const stored = table.columns.map((c) => ({
          name: c.name,
          type: source.name === 'postgres' ? duckdbTypeOf(c.type) : c.type,
        }));
        const columns = exportedColumns(policy, table.name, stored);
        const partitionedBy = table.name.startsWith('_etl_')
          ? null
          : (PARTITION_COLUMNS.find((p) => stored.some((c) => c.name === p && PARTITION_TYPES.has(c.type))) ?? null);
        const byDay = stored.find((c) => c.name === partitionedBy)?.type === 'DATE';
        const hasLoadedAt = stored.some((c) => c.name === '_loaded_at');
        const before = previous?.tables.find((t) => t.name === table.name);
        const sameColumns =
          samePolicy && before !== undefined && JSON.stringify(before.columns) === JSON.stringify(columns);
        const parts = await partitionStats(
          conn,
          source.name,
          qualified(source.schema, table.name),
          partitionedBy,
          byDay,
          hasLoadedAt,
        );
        const files: ExportedFile[] = [];
        for (const part of parts) {
          const path = partitionedBy
            ? `${table.name}/month=${part.month ?? NULL_MONTH}/part.parquet`
            : `${table.name}/part.parquet`;
          const file: ExportedFile = {
            path,
            ...(partitionedBy ? { month: part.month } : {}),
            rows: part.rows,
            maxLoadedAt: part.maxLoadedAt,
            fingerprint: part.fingerprint,
          };
          files.push(file);
          const old = before?.files.find((f) => f.path === path);
          const target = safeTarget(root, path);
          if (
            sameColumns &&
            old &&
            old.rows === file.rows &&
            old.fingerprint === file.fingerprint &&
            existsSync(target)
          ) {
            skipped++;
            continue;
          }
          const where = partitionedBy ? monthFilter(partitionedBy, byDay, part.month) : 'TRUE';
          const select = `SELECT ${exportSelectList(source.name, policy, table.name, columns)} FROM ${qualified(source.schema, table.name)} t WHERE ${where}`;
          const temporary = `${target}.${process.pid}.tmp`;
          // what an export killed while writing here left behind
          for (const name of readdirSync(dirname(target)))
            if (/^part\.parquet\.\d+\.tmp$/.test(name)) rmSync(join(dirname(target), name));
          if (source.name === 'duckdb')
            await conn.run(`COPY (${select}) TO ${quoteLiteral(temporary)} (FORMAT parquet, COMPRESSION zstd)`);
          else await copyThroughDuckDb(conn, scratch!, select, columns, temporary);
          renameSync(temporary, target);
          written++;
        }
        exported.push({ name: table.name, partitionedBy, columns, rows: files.reduce((n, f) => n + f.rows, 0), files });
      }
    });
  } finally {
    scratch?.closeSync();
    memory?.closeSync();
    if (spill) rmSync(spill, { recursive: true, force: true });
  }

  // files of the previous export that hold no rows now (a table dropped, a month emptied)
  const kept = new Set(exported.flatMap((t) => t.files.map((f) => f.path)));
  let deleted = 0;
  for (const old of previous?.tables.flatMap((t) => t.files) ?? []) {
    if (kept.has(old.path)) continue;
    if (!existsSync(join(root, old.path))) continue;
    const target = safeTarget(root, old.path);
    rmSync(target);
    deleted++;
    // an emptied month's folder goes too: engines that list partitions would take it for an empty one
    if (old.month !== undefined && readdirSync(dirname(target)).length === 0) rmdirSync(dirname(target));
  }
  const manifest: ExportManifest = {
    format: 'parquet',
    warehouse: source.name,
    schema: source.schema,
    exportedAt: new Date().toISOString(),
    personalData: policy.personalData,
    keyCheck,
    tables: exported,
  };
  const manifestPath = safeTarget(root, 'manifest.json');
  writeFileSync(`${manifestPath}.${process.pid}.tmp`, `${JSON.stringify(manifest, null, 2)}\n`);
  renameSync(`${manifestPath}.${process.pid}.tmp`, manifestPath);
  return { manifest, written, skipped, deleted };
}

/** The previous export's manifest, or undefined for a first export (or one whose manifest cannot be read: all is rewritten). */
function readPreviousManifest(root: string): ExportManifest | undefined {
  const path = join(root, 'manifest.json');
  if (!existsSync(path) || lstatSync(path).isSymbolicLink()) return undefined;
  try {
    const manifest = JSON.parse(readFileSync(path, 'utf8')) as ExportManifest;
    return Array.isArray(manifest.tables) ? manifest : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The absolute path of `path` under `root`, its folders made; refuses a path that leaves `root` and any folder or
 * file on the way that is a symbolic link, so nothing is written through a link out of the export folder.
 */
function safeTarget(root: string, path: string): string {
  const target = resolve(root, path);
  const rel = relative(root, target);
  if (rel.startsWith('..') || rel === '' || resolve(root, rel) !== target)
    throw new ExportPathError(`${path} is not inside ${root}`);
  let at = root;
  const parts = rel.split(sep);
  for (const [i, part] of parts.entries()) {
    at = join(at, part);
    if (!existsSync(at) && !isDanglingLink(at)) {
      if (i < parts.length - 1) mkdirSync(at);
      continue;
    }
    const stat = lstatSync(at);
    if (stat.isSymbolicLink())
      throw new ExportPathError(`${at} is a symbolic link: the export writes only inside ${root}`);
    if (i < parts.length - 1 && !stat.isDirectory())
      throw new ExportPathError(`${at} is a file where the export needs a folder`);
  }
  return target;
}

function isDanglingLink(path: string): boolean {
  try {
    return lstatSync(path).isSymbolicLink();
  } catch {
    return false;
  }
}

interface PartitionStats {
  month: string | null;
  rows: number;
  maxLoadedAt: string | null;
  fingerprint: string;
}

/** Per month (or for the whole table): its rows, latest `_loaded_at` and fingerprint, in one scan. */
async function partitionStats(
  conn: ExportConnection,
  warehouse: 'duckdb' | 'postgres',
  table: string,
  partitionedBy: string | null,
  byDay: boolean,
  hasLoadedAt: boolean,
): Promise<PartitionStats[]> {
  const month = partitionedBy
    ? warehouse === 'duckdb'
      ? `strftime(t.${quoteIdent(partitionedBy)}, '%Y-%m')`
      : // a day is zone-free: cast to a plain timestamp, never through the session's zone
        `to_char(${byDay ? `CAST(t.${quoteIdent(partitionedBy)} AS timestamp)` : `t.${quoteIdent(partitionedBy)} AT TIME ZONE 'UTC'`}, 'YYYY-MM')`
    : 'NULL';
  const loaded = hasLoadedAt ? `CAST(max(t."_loaded_at") AS VARCHAR)` : 'NULL';
  // a row's text holds every column: any changed value, added or removed row changes the sum
  const fingerprint =
    warehouse === 'duckdb'
      ? `CAST(sum(hash(CAST(t AS VARCHAR))) AS VARCHAR)`
      : `CAST(sum(('x' || substr(md5(CAST(t AS TEXT)), 1, 15))::bit(60)::bigint) AS VARCHAR)`;
  const rows = await conn.all<{
    month: string | null;
    rows: number | string | bigint;
    max_loaded: string | null;
    fingerprint: string | null;
  }>(
    `SELECT ${month} AS month, count(*) AS rows, ${loaded} AS max_loaded, ${fingerprint} AS fingerprint FROM ${table} t GROUP BY 1 ORDER BY 1`,
  );
  const parts = rows
    .filter((r) => Number(r.rows) > 0)
    .map((r) => ({
      month: r.month,
      rows: Number(r.rows),
      maxLoadedAt: r.max_loaded,
      fingerprint: r.fingerprint ?? '0',
    }));
  // an empty table is still one file, holding its columns: an engine pointed at it finds the table, with no rows
  return partitionedBy || parts.length > 0 ? parts : [{ month: null, rows: 0, maxLoadedAt: null, fingerprint: '0' }];
}

/** The rows of one month of `column` (UTC months of an instant), as a range its zone maps and indexes can use. */
function monthFilter(column: string, byDay: boolean, month: string | null): string {
  const c = quoteIdent(column);
  if (month === null) return `${c} IS NULL`;
  const [year, m] = month.split('-').map(Number) as [number, number];
  const next = m === 12 ? `${year + 1}-01` : `${year}-${String(m + 1).padStart(2, '0')}`;
  const start = (m: string) => quoteLiteral(byDay ? `${m}-01` : `${m}-01 00:00:00+00`);
  return `${c} >= ${start(month)} AND ${c} < ${start(next)}`;
}
