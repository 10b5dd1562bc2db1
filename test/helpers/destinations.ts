import { copyFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { inject } from 'vitest';
import type { DestinationSettings } from '../../src/plan/job-plan.js';
import { createTestDatabase } from './postgres-server.js';
import { testTempDir } from './temp-dir.js';

/**
 * The warehouses every end-to-end suite runs against. Each call of `fresh()` gives a warehouse of that kind with
 * nothing loaded, as the pipeline's first open leaves it (copied from one migrated once per test run); `warehouse` is
 * what a subprocess needs to reach it (LOYALTY_WAREHOUSE).
 */
export interface TestDestination {
  name: 'duckdb' | 'postgres';
  fresh(): Promise<{ config: DestinationSettings; warehouse: string }>;
  /** A warehouse of that kind that nothing has opened yet (no file; a database with nothing in it). */
  empty(): Promise<{ config: DestinationSettings; warehouse: string }>;
  /**
   * A new warehouse of that kind holding what the warehouse of `config` holds (its file copied, or its database
   * created from it as a template), for a test to start from the end of work done once for several tests. Nothing
   * may have the original open meanwhile.
   */
  copy(config: DestinationSettings): Promise<{ config: DestinationSettings; warehouse: string }>;
}

/**
 * A new file in a folder of its own for every call: a copy of one that the pipeline's first open migrated (schema
 * `main`); `empty()` for a path where no file is yet.
 */
export const duckdbTestDestination: TestDestination = {
  name: 'duckdb',
  async fresh() {
    const made = await this.empty();
    copyFileSync(inject('duckdbTemplate'), made.warehouse);
    return made;
  },
  async empty() {
    const path = join(testTempDir('warehouse-'), 'warehouse.duckdb');
    return { config: { type: 'duckdb', path, schema: 'main' }, warehouse: path };
  },
  async copy(original) {
    if (original.type !== 'duckdb') throw new Error(`not a DuckDB warehouse: ${original.type}`);
    const { warehouse } = await this.empty();
    // a file closed by its last process has its write-ahead log checkpointed into it; one left by a kill has not
    for (const suffix of ['', '.wal'])
      if (existsSync(original.path + suffix)) copyFileSync(original.path + suffix, warehouse + suffix);
    return { config: { ...original, path: warehouse }, warehouse };
  },
};

/**
 * A new database on the session's server (see `global-setup.ts`) for every call: a copy of one that the pipeline's
 * first open migrated (schema `public`), so it holds what any warehouse holds before its first run; `empty()` for a
 * database nothing has opened.
 */
export const postgresTestDestination: TestDestination = {
  name: 'postgres',
  async fresh() {
    const url = await createTestDatabase(inject('pgUrl'), inject('pgDatabasePrefix'), inject('pgTemplate'));
    return { config: { type: 'postgres', url, schema: 'public' }, warehouse: url };
  },
  async empty() {
    const url = await createTestDatabase(inject('pgUrl'), inject('pgDatabasePrefix'));
    return { config: { type: 'postgres', url, schema: 'public' }, warehouse: url };
  },
  async copy(original) {
    if (original.type !== 'postgres') throw new Error(`not a PostgreSQL warehouse: ${original.type}`);
    const template = decodeURIComponent(new URL(original.url).pathname.slice(1));
    const url = await createTestDatabase(inject('pgUrl'), inject('pgDatabasePrefix'), template);
    return { config: { ...original, url }, warehouse: url };
  },
};

/** Every destination the suites loop over. */
export const testDestinations: TestDestination[] = [duckdbTestDestination, postgresTestDestination];

/**
 * `config` publishing no copy for analysts (`publish_path: false`; a PostgreSQL warehouse publishes none), for the
 * commands of a test that come between the ones whose publish it keeps: on DuckDB a publish costs each command about
 * half a second, and a series of nights or one-day backfills would publish a copy nobody reads after each of them.
 */
export function unpublished(config: DestinationSettings): DestinationSettings {
  return config.type === 'duckdb' ? { ...config, publish_path: false } : config;
}
