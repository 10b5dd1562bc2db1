import { createHash } from 'node:crypto';
import type { DuckDBConnection } from '@duckdb/node-api';
import { tableKey, type SourceShape } from './copy-ledger.js';
import { NEVER_FOR_ANALYSTS } from '../catalog/warehouse-catalog.js';
import { isPipelineRelation } from '../derived/personal-data.js';
import { qualified, quoteIdent, quoteLiteral } from '../warehouse/identifiers.js';
import { withDuckDb } from './duckdb-connection.js';

/** A table or view of an attached database, by schema and name. */
export interface CopiedRelation {
  schema: string;
  name: string;
  kind: 'table' | 'view';
}

/** The names of the pipeline's own tables and views a text of SQL names (`_etl_…`, quoted or not). */
const PIPELINE_NAME = /_etl_[A-Za-z0-9_]+/g;

/**
 * The pipeline's own tables and views (`_etl_…`) of the attached database `db` that the analysts' copy leaves out:
 * its secrets always (`NEVER_FOR_ANALYSTS`); unless `pipelineTables`, all the others too but those a view or macro
 * of the data reads (the survey views read `_etl_columns`, `accounts_typed` reads `_etl_typed_values`), which stay
 * so that every view of the copy still answers.
 */
export async function leftOutOfCopy(
  conn: DuckDBConnection,
  db: string,
  pipelineTables = false,
): Promise<CopiedRelation[]> {
  const rows = async <T>(sql: string) => (await conn.runAndReadAll(sql)).getRowObjectsJson() as unknown as T[];
  const at = `database_name = ${quoteLiteral(db)}`;
  const relations = [
    ...(
      await rows<{ schema_name: string; name: string }>(
        `SELECT schema_name, table_name AS name FROM duckdb_tables() WHERE ${at} AND NOT temporary`,
      )
    ).map((r) => ({ schema: r.schema_name, name: r.name, kind: 'table' as const })),
    ...(
      await rows<{ schema_name: string; name: string }>(
        `SELECT schema_name, view_name AS name FROM duckdb_views() WHERE ${at} AND NOT internal AND NOT temporary`,
      )
    ).map((r) => ({ schema: r.schema_name, name: r.name, kind: 'view' as const })),
  ];
  const texts = new Map<string, string>();
  for (const v of await rows<{ view_name: string; sql: string }>(
    `SELECT view_name, sql FROM duckdb_views() WHERE ${at} AND NOT internal AND NOT temporary`,
  ))
    texts.set(v.view_name, v.sql);
  const macros = await rows<{ macro_definition: string | null }>(
    `SELECT macro_definition FROM duckdb_functions() WHERE ${at} AND NOT internal AND macro_definition IS NOT NULL`,
  );
  // what the data's views and macros read, and what the pipeline's views among those read in turn
  const read = new Set<string>();
  const pending = [
    ...relations.filter((r) => r.kind === 'view' && !isPipelineRelation(r.name)).map((r) => texts.get(r.name) ?? ''),
    ...macros.map((m) => m.macro_definition ?? ''),
  ];
  while (pending.length > 0)
    for (const name of pending.pop()!.match(PIPELINE_NAME) ?? [])
      if (!read.has(name)) {
        read.add(name);
        if (texts.has(name)) pending.push(texts.get(name)!);
      }
  return relations.filter(
    (r) => NEVER_FOR_ANALYSTS.has(r.name) || (!pipelineTables && isPipelineRelation(r.name) && !read.has(r.name)),
  );
}

/** Drops `relations` from the attached database `db`, views first (a view may read a table that goes). */
export async function dropFromCopy(
  conn: DuckDBConnection,
  db: string,
  relations: readonly CopiedRelation[],
): Promise<void> {
  for (const kind of ['view', 'table'] as const)
    for (const r of relations.filter((x) => x.kind === kind))
      await conn.run(`DROP ${kind.toUpperCase()} IF EXISTS ${quoteIdent(db)}.${qualified(r.schema, r.name)}`);
}

/**
 * Leaves the pipeline's own tables out of the copy `file` written as the warehouse stands (`personal_data: keep`,
 * whose copy is the warehouse's file), its secrets whatever `pipelineTables` says.
 */
export async function leavePipelineTablesOut(file: string, pipelineTables: boolean): Promise<void> {
  await withDuckDb(':memory:', { threads: '1' }, async (conn) => {
    await conn.run(`ATTACH ${quoteLiteral(file)} AS dst`);
    await dropFromCopy(conn, 'dst', await leftOutOfCopy(conn, 'dst', pipelineTables));
    await conn.run('CHECKPOINT dst');
    await conn.run('DETACH dst');
  });
}

/**
 * The warehouse's shape as the copy is written from it with `leftOut` left out: those tables are not written, and
 * what was left out is part of the catalog's hash, so a copy written with another scope is written whole.
 */
export function scopedShape(shape: SourceShape, leftOut: readonly CopiedRelation[]): SourceShape {
  const tables = new Map(shape.tables);
  for (const r of leftOut) if (r.kind === 'table') tables.delete(tableKey(r.schema, r.name));
  const scope = leftOut.map((r) => `${r.schema}.${r.name}`).sort();
  return {
    tables,
    catalogHash: createHash('sha256')
      .update(`${shape.catalogHash}\n${JSON.stringify(scope)}`)
      .digest('hex'),
  };
}
