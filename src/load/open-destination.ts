import type { DestinationConfig } from '../config/config-schema.js';
import type { Destination } from './destination.js';
import { DuckDbDestination } from './duckdb/duckdb-destination.js';
import { PostgresDestination } from './postgres/postgres-destination.js';

/** Opens the configured warehouse and brings its tables up to date. */
export async function openDestination(config: DestinationConfig): Promise<Destination> {
  const destination: Destination = config.type === 'duckdb' ? await DuckDbDestination.open(config.path, config.schema, { memoryLimit: config.memory_limit, checkpointThreshold: config.checkpoint_threshold, threads: config.threads }) : await PostgresDestination.open(config.url, config.schema);
  try {
    await destination.migrate();
  } catch (error) {
    await destination.close();
    throw error;
  }
  return destination;
}
