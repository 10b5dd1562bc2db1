import type { DestinationSettings } from '../plan/job-plan.js';
import type { Destination } from './destination.js';
import { DuckDbDestination } from './duckdb/duckdb-destination.js';
import { DEFAULT_LOCK_TIMEOUT_S, PostgresDestination } from './postgres/postgres-destination.js';
import { WarehouseConfigError } from './warehouse/warehouse-errors.js';

/**
 * Opens the configured warehouse and brings its tables up to date. With `create: false` (the commands that only
 * look at a warehouse) it must exist already: a DuckDB file that is missing, or a database without the pipeline's
 * tables, is a {@link WarehouseConfigError} instead of a new empty warehouse.
 */
export async function openDestination(
  config: DestinationSettings,
  { create = true }: { create?: boolean } = {},
): Promise<Destination> {
  const destination: Destination =
    config.type === 'duckdb'
      ? await DuckDbDestination.open(
          config.path,
          config.schema,
          {
            memoryLimit: config.memory_limit,
            checkpointThreshold: config.checkpoint_threshold,
            threads: config.threads,
            stagingMemory: config.staging_memory,
          },
          { create },
        )
      : await PostgresDestination.open(config.url, config.schema, {
          lockTimeoutSeconds: config.busy_timeout_s ?? DEFAULT_LOCK_TIMEOUT_S,
        });
  try {
    if (!create && !(await holdsPipelineTables(destination, config.schema))) {
      throw new WarehouseConfigError(
        `warehouse ${destination.describe()} holds no loyalty-etl tables; run \`loyalty-etl run\` to create them (or correct the destination / LOYALTY_WAREHOUSE)`,
      );
    }
    await destination.migrate();
  } catch (error) {
    await destination.close();
    throw error;
  }
  return destination;
}

/** The warehouse has been set up by the pipeline: its migrations table is in `schema`. */
async function holdsPipelineTables(destination: Destination, schema: string): Promise<boolean> {
  const rows = await destination.withConnection((conn) =>
    conn.all(
      `SELECT 1 AS found FROM information_schema.tables WHERE table_schema = $1 AND table_name = '_etl_migrations'`,
      [schema],
    ),
  );
  return rows.length > 0;
}
