import type { Destination } from '../destination.js';
import type { ExportSource } from '../export/parquet-export.js';

/** A PostgreSQL warehouse as an export source: one repeatable-read snapshot while runs go on. */
export function postgresExportSource(destination: Destination): ExportSource {
  return {
    name: 'postgres',
    schema: destination.schema,
    tables: async () => (await destination.describeTables()).filter((r) => r.kind === 'table'),
    snapshot: (fn) =>
      destination.withConnection((conn) =>
        conn.transaction(async () => {
          await conn.run('SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY');
          return fn(conn);
        }),
      ),
  };
}
