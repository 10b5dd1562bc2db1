import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { warehouseAt, warehouseOf } from '../../src/load/warehouses.js';

describe('the registry of warehouses', () => {
  it('picks the entry of the configured dialect, each saying what the commands ask', () => {
    const file = join(mkdtempSync(join(tmpdir(), 'warehouses-')), 'w.duckdb');
    const duckdb = warehouseOf({ type: 'duckdb', path: file, schema: 'main' });
    expect(duckdb.name).toBe('duckdb');
    expect(duckdb.publishesCopy).toBe(true);
    expect(duckdb.missingFile()).toBe(file);
    expect(duckdb.analystsRead({ personalData: 'keep' })).toEqual({
      schema: 'main',
      words: 'the published DuckDB copy',
    });

    const postgres = warehouseOf({ type: 'postgres', url: 'postgres://etl@db/analytics', schema: 'loyalty' });
    expect(postgres.name).toBe('postgres');
    expect(postgres.publishesCopy).toBe(false);
    expect(postgres.missingFile()).toBeUndefined();
    expect(postgres.analystsRead({ personalData: 'keep', schema: 'loyalty_analysts' })).toEqual({
      schema: 'loyalty_analysts',
      words: 'the PostgreSQL schema `loyalty_analysts`',
    });
  });

  it('reads a warehouse named on the command line as a URL or a DuckDB file', () => {
    expect(warehouseAt('postgres://analyst@db/analytics').name).toBe('postgres');
    expect(warehouseAt('postgresql://analyst@db/analytics').name).toBe('postgres');
    expect(warehouseAt('/data/loyalty.published.duckdb').name).toBe('duckdb');
  });
});
