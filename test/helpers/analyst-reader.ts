import { DuckDBInstance } from '@duckdb/node-api';
import pg from 'pg';
import type { DestinationSettings } from '../../src/plan/job-plan.js';
import { withWarehouse } from './warehouse-reader.js';

/** A query as an analyst runs it: rows as JSON-friendly objects. */
export interface AnalystConnection {
  all<T = Record<string, unknown>>(sql: string): Promise<T[]>;
}

/**
 * Runs `fn` where analysts read the warehouse of `config`, as they open it: the published DuckDB copy read-only, or
 * the PostgreSQL analysts' schema (`<schema>_analysts`) on a plain session. Nothing is migrated or written.
 */
export async function asAnalyst<T>(
  config: DestinationSettings,
  fn: (conn: AnalystConnection) => Promise<T>,
): Promise<T> {
  if (config.type === 'duckdb') {
    const instance = await DuckDBInstance.create(config.path.replace(/\.duckdb$/, '.published.duckdb'), {
      access_mode: 'READ_ONLY',
    });
    const conn = await instance.connect();
    try {
      await conn.run(`SET TimeZone = 'UTC'`);
      return await fn({
        all: async <R>(sql: string) => (await conn.runAndReadAll(sql)).getRowObjectsJson() as unknown as R[],
      });
    } finally {
      conn.closeSync();
      instance.closeSync();
    }
  }
  const client = new pg.Client({ connectionString: config.url });
  await client.connect();
  try {
    await client.query(`SET search_path TO "${config.schema}_analysts"; SET TIME ZONE 'UTC'`);
    return await fn({ all: async <R>(sql: string) => (await client.query(sql)).rows as R[] });
  } finally {
    await client.end();
  }
}

/** Makes the analysts' schema of a PostgreSQL warehouse (personal data kept), as a run does; DuckDB has none. */
export async function keepAnalystsSchema(config: DestinationSettings): Promise<void> {
  if (config.type !== 'postgres') return;
  await withWarehouse(config, (_conn, destination) =>
    destination.keepAnalysts!({ personalData: 'keep', schema: `${config.schema}_analysts` }, 'test'),
  );
}
