import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { DestinationConfig } from '../../src/config/config-schema.js';

/**
 * The warehouses every end-to-end suite runs against. Each call of `fresh()` gives an empty warehouse of
 * that kind; `env` is what a subprocess needs to reach it (LOYALTY_WAREHOUSE).
 */
export interface TestDestination {
  name: 'duckdb' | 'postgres';
  fresh(): Promise<{ config: DestinationConfig; warehouse: string }>;
}

export const duckdbTestDestination: TestDestination = {
  name: 'duckdb',
  async fresh() {
    const path = join(mkdtempSync(join(tmpdir(), 'loyalty-etl-')), 'warehouse.duckdb');
    return { config: { type: 'duckdb', path, schema: 'main' }, warehouse: path };
  },
};

/** Every destination the suites loop over. */
export const testDestinations: TestDestination[] = [duckdbTestDestination];
