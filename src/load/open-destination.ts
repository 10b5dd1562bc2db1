import type { DestinationConfig } from '../config/config-schema.js';
import type { Destination } from './destination.js';
import { DuckDbDestination } from './duckdb/duckdb-destination.js';

/** Opens the configured warehouse and brings its tables up to date. */
export async function openDestination(config: DestinationConfig): Promise<Destination> {
  let destination: Destination;
  if (config.type === 'duckdb') destination = await DuckDbDestination.open(config.path, config.schema);
  else throw new Error('the postgres destination is not available in this version');
  try {
    await destination.migrate();
  } catch (error) {
    await destination.close();
    throw error;
  }
  return destination;
}
