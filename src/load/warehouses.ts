import type { DestinationSettings } from '../plan/job-plan.js';
import type { Destination } from './destination.js';
import { duckDbWarehouse } from './duckdb/duckdb-warehouse.js';
import { postgresWarehouse } from './postgres/postgres-warehouse.js';
import type { WarehouseEntry } from './warehouse-entry.js';

/**
 * The registry of warehouses, one entry per dialect: the one place a dialect is chosen from the `destination`
 * settings (and the only file outside the dialect folders that imports them). A new dialect is one line here and
 * its folder beside `duckdb/` and `postgres/`.
 */
const WAREHOUSES: {
  [T in DestinationSettings['type']]: (settings: DestinationSettings & { type: T }) => WarehouseEntry;
} = {
  duckdb: duckDbWarehouse,
  postgres: postgresWarehouse,
};

/** The configured warehouse's entry. */
export function warehouseOf(settings: DestinationSettings): WarehouseEntry {
  return (WAREHOUSES[settings.type] as (settings: DestinationSettings) => WarehouseEntry)(settings);
}

/** The entry of a warehouse named on the command line: a `postgres://` URL, or a DuckDB file (schema `main`). */
export function warehouseAt(fileOrUrl: string): WarehouseEntry {
  return /^postgres(ql)?:\/\//.test(fileOrUrl)
    ? warehouseOf({ type: 'postgres', url: fileOrUrl, schema: 'public' })
    : warehouseOf({ type: 'duckdb', path: fileOrUrl, schema: 'main' });
}

/**
 * Opens the configured warehouse and brings its tables up to date ({@link WarehouseEntry.open}). With
 * `create: false` it must exist already.
 */
export function openDestination(
  settings: DestinationSettings,
  options: { create?: boolean } = {},
): Promise<Destination> {
  return warehouseOf(settings).open(options);
}
