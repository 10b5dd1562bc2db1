import { join } from 'node:path';
import { inject } from 'vitest';
import type { DestinationSettings } from '../../src/plan/job-plan.js';
import { createTestDatabase } from './postgres-server.js';
import { testTempDir } from './temp-dir.js';

/**
 * The warehouses every end-to-end suite runs against. Each call of `fresh()` gives an empty warehouse of
 * that kind; `env` is what a subprocess needs to reach it (LOYALTY_WAREHOUSE).
 */
export interface TestDestination {
  name: 'duckdb' | 'postgres';
  fresh(): Promise<{ config: DestinationSettings; warehouse: string }>;
}

export const duckdbTestDestination: TestDestination = {
  name: 'duckdb',
  async fresh() {
    const path = join(testTempDir('warehouse-'), 'warehouse.duckdb');
    return { config: { type: 'duckdb', path, schema: 'main' }, warehouse: path };
  },
};

/** A new empty database on the session's server (see `global-setup.ts`) for every call. */
export const postgresTestDestination: TestDestination = {
  name: 'postgres',
  async fresh() {
    const url = await createTestDatabase(inject('pgUrl'), inject('pgDatabasePrefix'));
    return { config: { type: 'postgres', url, schema: 'public' }, warehouse: url };
  },
};

/** Every destination the suites loop over. */
export const testDestinations: TestDestination[] = [duckdbTestDestination, postgresTestDestination];
