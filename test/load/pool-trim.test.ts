import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Destination } from '../../src/load/destination.js';
import { sizeBytes } from '../../src/config/config-schema.js';
import { POOL_KEPT_BETWEEN_COMMITS } from '../../src/load/duckdb/pool-trim.js';
import { openDestination } from '../../src/load/open-destination.js';
import { account, loadAccounts } from '../helpers/account-spans.js';
import { duckdbTestDestination } from '../helpers/destinations.js';

/** Bytes DuckDB's buffer pool holds for the tables of the database file (pages read or written). */
async function tablePages(destination: Destination): Promise<number> {
  return destination.withConnection(async (conn) => {
    const [row] = await conn.all<{ bytes: number | string }>(`SELECT memory_usage_bytes AS bytes FROM duckdb_memory() WHERE tag = 'BASE_TABLE'`);
    return Number(row!.bytes);
  });
}

describe('the DuckDB buffer pool after a span commit', () => {
  let destination: Destination;
  beforeEach(async () => {
    const { config } = await duckdbTestDestination.fresh();
    destination = await openDestination({ ...config, memory_limit: '512MB' } as typeof config);
  });
  afterEach(async () => destination.close());

  it('gives back the table pages it cached, keeping the configured limit', async () => {
    await destination.withConnection(async (conn) => {
      await conn.run(`CREATE TABLE filler AS SELECT range AS id, md5(CAST(range AS VARCHAR)) || md5(CAST(range + 1 AS VARCHAR)) AS text FROM range(2500000)`);
      await conn.run('CHECKPOINT');
      await conn.all(`SELECT max(text) AS t, max(id) AS i FROM filler`);
    });
    // what a backfill's merges leave in the pool: more than it keeps between commits
    expect(await tablePages(destination)).toBeGreaterThan(2 * sizeBytes(POOL_KEPT_BETWEEN_COMMITS));

    await loadAccounts(destination, '2024-01-01', [{ row: account('C1', 'Athens'), fields: { tier: 'gold' } }]);

    expect(await tablePages(destination)).toBeLessThanOrEqual(sizeBytes(POOL_KEPT_BETWEEN_COMMITS));
    await destination.withConnection(async (conn) => {
      const [limit] = await conn.all<{ value: string }>(`SELECT current_setting('memory_limit') AS value`);
      expect(limit!.value).toBe('488.2 MiB');
      expect(await conn.all('SELECT customer_id, cf_tier FROM accounts')).toEqual([{ customer_id: 'C1', cf_tier: 'gold' }]);
    });
  });

  it('reads sizes as the jobs file writes them', () => {
    expect(sizeBytes('256MB')).toBe(256e6);
    expect(sizeBytes('1.5GiB')).toBe(1.5 * 2 ** 30);
    expect(sizeBytes('64 kb')).toBe(64e3);
    expect(() => sizeBytes('lots')).toThrow(/not a size/);
  });
});
