import type { Destination } from './destination.js';
import { WarehouseConfigError } from './warehouse/warehouse-errors.js';

/**
 * Brings a warehouse just opened up to date (its migrations), closing it when that fails. With `create: false` it
 * must hold the pipeline's tables already: a database without them is a {@link WarehouseConfigError} instead of a
 * new empty warehouse.
 */
export async function readyDestination(
  destination: Destination,
  schema: string,
  { create }: { create: boolean },
): Promise<Destination> {
  try {
    if (!create && !(await holdsPipelineTables(destination, schema))) {
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
