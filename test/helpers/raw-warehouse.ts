import { DuckDBInstance } from '@duckdb/node-api';
import pg from 'pg';
import type { DestinationSettings } from '../../src/plan/job-plan.js';

/**
 * Runs statements on a warehouse (or a DuckDB file such as the analysts' copy) past the pipeline, which would
 * migrate it or refuse it, and returns the last one's rows. A PostgreSQL `searchPath` applies first.
 */
export async function rawSql(
  target: DestinationSettings | { file: string },
  statements: string[],
  { readOnly = false, searchPath }: { readOnly?: boolean; searchPath?: string } = {},
): Promise<Array<Record<string, unknown>>> {
  let rows: Array<Record<string, unknown>> = [];
  const file = 'file' in target ? target.file : target.type === 'duckdb' ? target.path : undefined;
  if (file !== undefined) {
    const instance = await DuckDBInstance.create(file, readOnly ? { access_mode: 'READ_ONLY' } : {});
    const conn = await instance.connect();
    try {
      for (const sql of statements) rows = (await conn.runAndReadAll(sql)).getRowObjectsJson() as typeof rows;
    } finally {
      conn.closeSync();
      instance.closeSync();
    }
    return rows;
  }
  const client = new pg.Client({ connectionString: (target as { url: string }).url });
  await client.connect();
  try {
    if (searchPath) await client.query(`SET search_path TO ${searchPath}`);
    for (const sql of statements) rows = (await client.query(sql)).rows as typeof rows;
  } finally {
    await client.end();
  }
  return rows;
}
