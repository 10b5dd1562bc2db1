import { createHash } from 'node:crypto';
import type { DuckDBConnection } from '@duckdb/node-api';
import type { AnalystsPolicy } from '../../plan/job-plan.js';
import { qualified, quoteIdent, quoteLiteral } from '../warehouse/identifiers.js';
import { analystValue, isWithheld } from '../derived/personal-data.js';
import { NEVER_FOR_ANALYSTS } from '../catalog/warehouse-catalog.js';
import { duckdbDialect } from '../warehouse/warehouse-dialect.js';

/** The table of an analysts' copy that says what each of its tables was written from, in a schema of its own. */
export const LEDGER_TABLE = '_etl_published_tables';

/** The copy's schema of the pipeline's own: out of the way of the data analysts read in the warehouse's schema. */
export const LEDGER_SCHEMA = '_etl';

/**
 * How the copy is written: raised whenever what a table's rows become in the copy changes in a way the rest of a
 * table's definition does not show, so a copy written before is written whole once.
 */
const FORMAT = 2;

/** A fixed text, hashed under the policy as a personal value would be, that tells a later publish which key was used. */
const KEY_CHECK_TEXT = 'loyalty-etl: the key this copy was hashed with';

/** A column of a warehouse table. */
export interface SourceColumn {
  name: string;
  type: string;
  nullable: boolean;
  comment: string | null;
}

/** A table of the warehouse as the copy is written from it. */
export interface SourceTable {
  schema: string;
  table: string;
  columns: SourceColumn[];
  /**
   * The column by whose values the table's fingerprint is also taken part by part (`_window_start`, the window a
   * row was loaded in, where the table has one): a table that changed is written again only in the windows that
   * changed. It is never withheld, so a row's window is the same in the copy.
   */
  partition?: string;
  /** SHA-256 of everything the copy's table is made from but its rows: DDL, comments, what each column becomes. */
  definitionHash: string;
}

/** What a table, or the rows of one window of it, held when the copy was written: row count, sum of row hashes. */
export interface Fingerprint {
  rows: bigint;
  contentHash: string;
}

/** A table's fingerprint, whole and (a table with a partition column) for each value of that column. */
export interface TablePrint {
  total: Fingerprint;
  /** By the partition column's value as text (null: the rows where it is NULL). */
  parts?: Map<string | null, Fingerprint>;
}

/** The warehouse's shape as the copy is written from it: its tables, and a hash of everything else in its catalog. */
export interface SourceShape {
  tables: Map<string, SourceTable>;
  /** SHA-256 of the schemas, views, macros, sequences, indexes and types, comments included. */
  catalogHash: string;
}

/** A row of {@link LEDGER_TABLE}: a table's whole (`part` undefined) or one window of it. */
export interface LedgerRow {
  schema: string;
  table: string;
  /** The rows of one value of the table's partition column (null: where it is NULL); undefined: the whole table. */
  part?: string | null;
  rows: bigint;
  contentHash: string;
  definitionHash: string;
  personalData: string;
  keyCheck: string | null;
  catalogHash: string;
}

/** The key of a table in the maps here. */
export function tableKey(schema: string, table: string): string {
  return `${schema}\u0000${table}`;
}

/** The column a table's fingerprint is taken by, window by window, where it has it (a DATE). */
const PARTITION_COLUMN = '_window_start';

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

/** Reads the tables and the rest of the catalog of the attached database `db` (the warehouse's snapshot). */
export async function readShape(conn: DuckDBConnection, db: string, policy: AnalystsPolicy): Promise<SourceShape> {
  const dbLiteral = quoteLiteral(db);
  const rows = async <T>(sql: string) => (await conn.runAndReadAll(sql)).getRowObjectsJson() as unknown as T[];
  const tables = await rows<{ schema_name: string; table_name: string; sql: string; comment: string | null }>(
    `SELECT schema_name, table_name, sql, comment FROM duckdb_tables() WHERE database_name = ${dbLiteral} AND NOT temporary
      ORDER BY schema_name, table_name`,
  );
  const columns = await rows<{
    schema_name: string;
    table_name: string;
    column_name: string;
    data_type: string;
    is_nullable: boolean;
    comment: string | null;
  }>(
    `SELECT c.schema_name, c.table_name, c.column_name, c.data_type, c.is_nullable, c.comment FROM duckdb_columns() c
       JOIN duckdb_tables() t ON t.database_name = c.database_name AND t.schema_name = c.schema_name AND t.table_name = c.table_name
      WHERE c.database_name = ${dbLiteral} ORDER BY c.schema_name, c.table_name, c.column_index`,
  );
  const byTable = new Map<string, SourceColumn[]>();
  for (const c of columns) {
    const key = tableKey(c.schema_name, c.table_name);
    byTable.set(key, [
      ...(byTable.get(key) ?? []),
      { name: c.column_name, type: c.data_type, nullable: c.is_nullable, comment: c.comment },
    ]);
  }
  const shape = new Map<string, SourceTable>();
  for (const t of tables) {
    if (isLedger(t.schema_name, t.table_name)) continue; // the copy's own, never copied from a warehouse
    if (NEVER_FOR_ANALYSTS.has(t.table_name)) continue;
    const key = tableKey(t.schema_name, t.table_name);
    const list = byTable.get(key) ?? [];
    const partition = list.find(
      (c) => c.name === PARTITION_COLUMN && c.type === 'DATE' && !isWithheld(policy, t.table_name, c.name),
    )?.name;
    const definition = {
      format: FORMAT,
      partition: partition ?? null,
      sql: t.sql,
      comment: t.comment,
      columns: list.map((c) => ({
        ...c,
        becomes: analystValue(duckdbDialect, policy, t.table_name, c.name, 's.column', '$1'),
      })),
    };
    shape.set(key, {
      schema: t.schema_name,
      table: t.table_name,
      columns: list,
      ...(partition !== undefined ? { partition } : {}),
      definitionHash: sha256(JSON.stringify(definition)),
    });
  }
  // everything a copy holds besides tables is copied as it stands (`COPY FROM DATABASE`): any change in it, a copy
  // written whole
  const rest = {
    format: FORMAT,
    schemas: await rows(
      `SELECT schema_name, comment FROM duckdb_schemas() WHERE database_name = ${dbLiteral} AND NOT internal ORDER BY 1`,
    ),
    views: await rows(
      `SELECT schema_name, view_name, sql, comment FROM duckdb_views() WHERE database_name = ${dbLiteral} AND NOT internal AND NOT temporary ORDER BY 1, 2`,
    ),
    viewColumns: await rows(
      `SELECT c.schema_name, c.table_name, c.column_name, c.comment FROM duckdb_columns() c
         JOIN duckdb_views() v ON v.database_name = c.database_name AND v.schema_name = c.schema_name AND v.view_name = c.table_name
        WHERE c.database_name = ${dbLiteral} ORDER BY 1, 2, c.column_index`,
    ),
    functions: await rows(
      `SELECT schema_name, function_name, function_type, parameters, macro_definition, comment FROM duckdb_functions()
        WHERE database_name = ${dbLiteral} AND NOT internal ORDER BY 1, 2, 3, CAST(parameters AS VARCHAR), 5`,
    ),
    sequences: await rows(
      `SELECT schema_name, sequence_name, sql FROM duckdb_sequences() WHERE database_name = ${dbLiteral} AND NOT temporary ORDER BY 1, 2`,
    ),
    indexes: await rows(
      `SELECT schema_name, index_name, table_name, sql FROM duckdb_indexes() WHERE database_name = ${dbLiteral} ORDER BY 1, 2`,
    ),
    types: await rows(
      `SELECT schema_name, type_name, logical_type FROM duckdb_types() WHERE database_name = ${dbLiteral} AND NOT internal ORDER BY 1, 2`,
    ),
  };
  return { tables: shape, catalogHash: sha256(JSON.stringify(rest)) };
}

/** Whether `schema`.`table` is the copy's ledger. */
export function isLedger(schema: string, table: string): boolean {
  return schema === LEDGER_SCHEMA && table === LEDGER_TABLE;
}

/**
 * The fingerprint of a table of the attached database `db`: its row count and the sum, as a 128-bit integer, of
 * DuckDB's 64-bit hash of each row (a struct of its columns in order), for the whole table and, where it has a
 * partition column, for each of its values. A sum, not an exclusive or, so that two equal rows do not cancel out;
 * the count besides. Floating-point and interval columns are hashed as their text: DuckDB hashes values that compare
 * equal alike (0.0 and -0.0, 30 days and a month), which may still differ.
 */
export async function fingerprint(conn: DuckDBConnection, db: string, table: SourceTable): Promise<TablePrint> {
  const values = table.columns
    .map((c) =>
      /FLOAT|DOUBLE|REAL|INTERVAL/.test(c.type)
        ? `CAST(s.${quoteIdent(c.name)} AS VARCHAR)`
        : `s.${quoteIdent(c.name)}`,
    )
    .join(', ');
  const sum = `CAST(COALESCE(SUM(CAST(hash(row(${values})) AS HUGEINT)), 0) AS VARCHAR)`;
  const from = `${quoteIdent(db)}.${qualified(table.schema, table.table)} s`;
  if (table.partition === undefined) {
    const [row] = (
      await conn.runAndReadAll(`SELECT COUNT(*) AS n, ${sum} AS h FROM ${from}`)
    ).getRowObjectsJson() as Array<{ n: string; h: string }>;
    return { total: { rows: BigInt(row!.n), contentHash: row!.h } };
  }
  const rows = (
    await conn.runAndReadAll(
      `SELECT CAST(s.${quoteIdent(table.partition)} AS VARCHAR) AS part, COUNT(*) AS n, ${sum} AS h FROM ${from} GROUP BY 1`,
    )
  ).getRowObjectsJson() as Array<{ part: string | null; n: string; h: string }>;
  const parts = new Map<string | null, Fingerprint>();
  let count = 0n;
  let hash = 0n;
  for (const r of rows) {
    parts.set(r.part, { rows: BigInt(r.n), contentHash: r.h });
    count += BigInt(r.n);
    hash += BigInt(r.h);
  }
  return { total: { rows: count, contentHash: hash.toString() }, parts };
}

/** What the copy says of the policy's key: the fixed text hashed as a personal value is (NULL under `drop`). */
export async function keyCheckOf(conn: DuckDBConnection, policy: AnalystsPolicy): Promise<string | null> {
  const expression = analystValue(duckdbDialect, policy, LEDGER_TABLE, 'phone', quoteLiteral(KEY_CHECK_TEXT), '$1');
  const prepared = await conn.prepare(`SELECT ${expression} AS k`);
  if (expression.includes('$1')) prepared.bindVarchar(1, policy.key!);
  const [row] = (await prepared.runAndReadAll()).getRowObjectsJson() as Array<{ k: string | null }>;
  return row!.k;
}

/** Reads the ledger of the attached copy `db`; throws when it has none. */
export async function readLedger(conn: DuckDBConnection, db: string): Promise<LedgerRow[]> {
  const rows = (
    await conn.runAndReadAll(
      `SELECT schema_name, table_name, whole_table, window_start, CAST(row_count AS VARCHAR) AS row_count, content_hash,
              definition_hash, personal_data, key_check, catalog_hash
         FROM ${quoteIdent(db)}.${qualified(LEDGER_SCHEMA, LEDGER_TABLE)}`,
    )
  ).getRowObjectsJson() as Array<Record<string, string | boolean | null>>;
  return rows.map((r) => ({
    schema: r.schema_name as string,
    table: r.table_name as string,
    ...(r.whole_table === true ? {} : { part: r.window_start as string | null }),
    rows: BigInt(r.row_count as string),
    contentHash: r.content_hash as string,
    definitionHash: r.definition_hash as string,
    personalData: r.personal_data as string,
    keyCheck: (r.key_check as string | null) ?? null,
    catalogHash: r.catalog_hash as string,
  }));
}

/** Writes the ledger of the attached copy `db` anew (inside the caller's transaction). */
export async function writeLedger(conn: DuckDBConnection, db: string, rows: readonly LedgerRow[]): Promise<void> {
  const target = `${quoteIdent(db)}.${qualified(LEDGER_SCHEMA, LEDGER_TABLE)}`;
  const comment = duckdbDialect.commentLiteral;
  await conn.run(`CREATE SCHEMA IF NOT EXISTS ${quoteIdent(db)}.${quoteIdent(LEDGER_SCHEMA)}`);
  await conn.run(`DROP TABLE IF EXISTS ${target}`);
  await conn.run(
    `CREATE TABLE ${target} (schema_name VARCHAR NOT NULL, table_name VARCHAR NOT NULL, whole_table BOOLEAN NOT NULL,
       window_start VARCHAR, row_count BIGINT NOT NULL,
       content_hash VARCHAR NOT NULL, definition_hash VARCHAR NOT NULL, personal_data VARCHAR NOT NULL,
       key_check VARCHAR, catalog_hash VARCHAR NOT NULL)`,
  );
  await conn.run(
    `COMMENT ON TABLE ${target} IS ${comment('What each table of this copy was written from: the next publish writes again only the tables whose rows or definition changed since (published copies of DuckDB warehouses only).')}`,
  );
  const columns: Array<[string, string]> = [
    ['schema_name', 'Schema of the table.'],
    ['table_name', 'The table.'],
    ['whole_table', 'True for the row of the whole table; false for a row of the rows of one window of it.'],
    ['window_start', '_window_start of the rows a row that is not of the whole table is of (NULL: where it is NULL).'],
    ['row_count', 'The rows in the warehouse when the copy was written.'],
    ['content_hash', "Sum of DuckDB's hash of each of the rows in the warehouse when the copy was written."],
    ['definition_hash', 'SHA-256 of its definition, comments, and what each column becomes in the copy.'],
    ['personal_data', 'destination.analysts.personal_data the copy was written under.'],
    ['key_check', 'A fixed text hashed as personal data is in this copy (NULL under drop): tells a change of key.'],
    ['catalog_hash', "SHA-256 of the warehouse's views, macros, schemas, sequences, indexes and types."],
  ];
  for (const [name, text] of columns)
    await conn.run(`COMMENT ON COLUMN ${target}.${quoteIdent(name)} IS ${comment(text)}`);
  if (rows.length === 0) return;
  const text = (v: string | null) => (v === null ? 'NULL' : quoteLiteral(v));
  for (let i = 0; i < rows.length; i += 500)
    await conn.run(
      `INSERT INTO ${target} VALUES ${rows
        .slice(i, i + 500)
        .map(
          (r) =>
            `(${[r.schema, r.table].map(text).join(', ')}, ${r.part === undefined ? 'TRUE, NULL' : `FALSE, ${text(r.part)}`}, ${r.rows.toString()}, ${[r.contentHash, r.definitionHash, r.personalData, r.keyCheck, r.catalogHash].map(text).join(', ')})`,
        )
        .join(', ')}`,
    );
}
