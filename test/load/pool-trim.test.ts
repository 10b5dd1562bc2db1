import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Destination } from '../../src/load/destination.js';
import { sizeBytes } from '../../src/config/config-schema.js';
import { POOL_KEPT_BETWEEN_COMMITS, PoolTrim } from '../../src/load/duckdb/pool-trim.js';
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

  it('runs no statement of another connection while the pool is small, so none fails for want of memory', async () => {
    await destination.withConnection((conn) => conn.run(`CREATE TABLE filler AS SELECT range AS id, md5(CAST(range AS VARCHAR)) AS text FROM range(2000000)`));
    // a query whose hash table needs far more than the pool keeps between commits: run during a trim, it fails
    const heavy = () => destination.withConnection((conn) => conn.all<{ n: number | string }>(`SELECT count(DISTINCT text) AS n FROM filler`));
    let committing = true;
    const commits = async () => {
      for (let day = 1; day <= 20; day++) await loadAccounts(destination, `2024-02-${String((day % 28) + 1).padStart(2, '0')}`, [{ row: account(`C${day}`, 'Athens'), fields: { tier: 'gold' } }]);
      committing = false;
    };
    // queries for as long as the commits go on: most of them meet a trim
    const queries = async () => {
      const counts = [];
      while (committing || counts.length < 4) counts.push(Number((await heavy())[0]!.n));
      return counts;
    };

    const [, counts] = await Promise.all([commits(), queries()]);

    expect(new Set(counts)).toEqual(new Set([2_000_000]));
    await destination.withConnection(async (conn) => {
      const [limit] = await conn.all<{ value: string }>(`SELECT current_setting('memory_limit') AS value`);
      expect(limit!.value).toBe('488.2 MiB');
      const [accounts] = await conn.all<{ n: number | string }>('SELECT COUNT(*) AS n FROM accounts');
      expect(Number(accounts!.n)).toBe(20);
    });
  });

  it('trims only once the statements under way have ended, and starts none until it is done', async () => {
    const instance = await DuckDBInstance.create(':memory:');
    const [trimming, querying] = [await instance.connect(), await instance.connect()];
    const events: string[] = [];
    // the trim's connection, telling when each setting is made
    const logged = { run: async (sql: string) => { events.push(sql.replace(/.*= /, 'limit ')); return trimming.run(sql); } } as unknown as DuckDBConnection;
    const pool = new PoolTrim('512MB');
    const query = (name: string) =>
      pool.statement(async () => {
        events.push(`${name} starts`);
        await querying.run(`SELECT count(DISTINCT md5(CAST(range AS VARCHAR))) FROM range(1000000)`);
        events.push(`${name} ends`);
      });
    try {
      const underWay = query('first');
      const trim = pool.trim(logged);
      const later = query('second');
      await Promise.all([underWay, trim, later]);
    } finally {
      instance.closeSync();
    }
    expect(events).toEqual(['first starts', 'first ends', `limit '${POOL_KEPT_BETWEEN_COMMITS}'`, "limit '512MB'", 'second starts', 'second ends']);
  });

  it('reads sizes as the jobs file writes them', () => {
    expect(sizeBytes('256MB')).toBe(256e6);
    expect(sizeBytes('1.5GiB')).toBe(1.5 * 2 ** 30);
    expect(sizeBytes('64 kb')).toBe(64e3);
    expect(() => sizeBytes('lots')).toThrow(/not a size/);
  });
});
