import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { DuckDBInstance, type DuckDBConnection, type DuckDBValue } from '@duckdb/node-api';
import { quoteLiteral } from '../warehouse/identifiers.js';
import type { ExportSource } from '../export/parquet-export.js';
import { refuseNewerWarehouse } from '../warehouse/migrate.js';
import { WarehouseBusyError } from '../warehouse/warehouse-errors.js';

/** A DuckDB warehouse file opened read-only for an export, and what closes it. */
export interface DuckDbExportSource extends ExportSource {
  close(): void;
}

/**
 * Opens the warehouse file `path` read-only (`access_mode = READ_ONLY`): an export neither migrates nor comments
 * it, and takes no writer's lock; timestamps read in UTC, as the warehouse stores them.
 *
 * @throws WarehouseBusyError while another process has the file open for writing.
 * @throws WarehouseNewerError when a newer release of loyalty-etl migrated or wrote it.
 */
export async function openDuckDbExportSource(path: string, schema: string): Promise<DuckDbExportSource> {
  const file = resolve(path);
  if (!existsSync(file)) throw new Error(`${file} does not exist`);
  let instance: DuckDBInstance;
  try {
    instance = await DuckDBInstance.create(file, { access_mode: 'READ_ONLY' });
  } catch (error) {
    const message = (error as Error).message;
    if (!/lock/i.test(message)) throw error;
    const pid = /PID (\d+)/.exec(message)?.[1];
    throw new WarehouseBusyError(
      `${file} is open for writing in another process${pid ? ` (PID ${pid})` : ''}`,
      pid ? Number(pid) : undefined,
    );
  }
  const conn = await instance.connect();
  await conn.run(`SET TimeZone = 'UTC'`);
  const all = async <T>(sql: string, params: unknown[] = []): Promise<T[]> =>
    (await conn.runAndReadAll(sql, params as never)).getRowObjectsJson() as T[];
  try {
    await refuseNewerWarehouse({ all }, 'duckdb', schema, `duckdb ${file} (schema ${schema})`);
  } catch (error) {
    conn.closeSync();
    instance.closeSync();
    throw error;
  }
  return {
    name: 'duckdb',
    schema,
    async tables() {
      const rows = await all<{ table_name: string; column_name: string; data_type: string }>(
        `SELECT table_name, column_name, data_type FROM duckdb_columns() WHERE database_name = current_database() AND schema_name = ${quoteLiteral(schema)}
           AND table_name IN (SELECT table_name FROM duckdb_tables() WHERE database_name = current_database() AND schema_name = ${quoteLiteral(schema)})
         ORDER BY table_name, column_index`,
      );
      const tables = new Map<string, Array<{ name: string; type: string }>>();
      for (const row of rows) {
        const columns = tables.get(row.table_name) ?? [];
        columns.push({ name: row.column_name, type: row.data_type });
        tables.set(row.table_name, columns);
      }
      return [...tables].map(([name, columns]) => ({ name, columns }));
    },
    snapshot: (fn) =>
      inTransaction(conn, () =>
        fn({ run: async (sql, params) => void (await conn.run(sql, params as DuckDBValue[] | undefined)), all }),
      ),
    close() {
      conn.closeSync();
      instance.closeSync();
    },
  };
}

async function inTransaction<T>(conn: DuckDBConnection, fn: () => Promise<T>): Promise<T> {
  await conn.run('BEGIN TRANSACTION');
  try {
    return await fn();
  } finally {
    await conn.run('ROLLBACK').catch(() => undefined);
  }
}
