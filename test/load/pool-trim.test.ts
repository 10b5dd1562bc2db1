import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { commitWindows } from '../../src/pipeline/load-span.js';
import type { Destination } from '../../src/load/destination.js';
import { POOL_TRIM_HEADROOM, PoolTrim } from '../../src/load/duckdb/pool-trim.js';
import { openDestination } from '../../src/load/warehouses.js';
import { accountCustomFieldsTable, accountsTable, withCustomFields } from '../../src/streams/accounts.js';
import { account, loadAccounts } from '../helpers/account-spans.js';
import { duckdbTestDestination } from '../helpers/destinations.js';
import { testTempDir } from '../helpers/temp-dir.js';

/** Bytes DuckDB's buffer pool holds for a tag, in memory and written to its temp directory. */
async function pool(destination: Destination, tag: string): Promise<{ memory: number; spilled: number }> {
  return destination.withConnection(async (conn) => {
    const [row] = await conn.all<{ memory: number | string; spilled: number | string }>(
      `SELECT memory_usage_bytes AS memory, temporary_storage_bytes AS spilled FROM duckdb_memory() WHERE tag = $1`,
      [tag],
    );
    return { memory: Number(row!.memory), spilled: Number(row!.spilled) };
  });
}

/** Bytes DuckDB's buffer pool holds for the tables of the database file (pages read or written). */
async function tablePages(destination: Destination): Promise<number> {
  return (await pool(destination, 'BASE_TABLE')).memory;
}

/** What a backfill's merges leave in the pool: a table of 150 MB, read whole. */
async function fillPool(destination: Destination): Promise<void> {
  await destination.withConnection(async (conn) => {
    await conn.run(
      `CREATE TABLE filler AS SELECT range AS id, md5(CAST(range AS VARCHAR)) || md5(CAST(range + 1 AS VARCHAR)) AS text FROM range(2500000)`,
    );
    await conn.run('CHECKPOINT');
    await conn.all(`SELECT max(text) AS t, max(id) AS i FROM filler`);
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
    await fillPool(destination);
    expect(await tablePages(destination)).toBeGreaterThan(64e6);

    await loadAccounts(destination, '2024-01-01', [{ row: account('C1', 'Athens'), fields: { tier: 'gold' } }]);

    expect(await tablePages(destination)).toBeLessThanOrEqual(Number(POOL_TRIM_HEADROOM));
    await destination.withConnection(async (conn) => {
      const [limit] = await conn.all<{ value: string }>(`SELECT current_setting('memory_limit') AS value`);
      expect(limit!.value).toBe('488.2 MiB');
      expect(await conn.all('SELECT customer_id, cf_tier FROM accounts')).toEqual([
        { customer_id: 'C1', cf_tier: 'gold' },
      ]);
    });
  });

  it('keeps the rows another span has staged in memory: only table pages are given back', async () => {
    await fillPool(destination);
    // a span in flight, with more rows staged than a trim to a fixed size (32MB) kept: that wrote them to disk
    const staged = 120_000;
    const other = await destination.openSpan({
      job: 'j',
      stream: 'accounts',
      runId: 'other',
      windows: [{ start: '2024-03-01', end: '2024-03-01' }],
      tables: [accountsTable, accountCustomFieldsTable],
    });
    for (let from = 0; from < staged; from += 5_000) {
      const batch = Array.from({ length: 5_000 }, (_, i) => ({
        seq: from + i + 1,
        windowStart: '2024-03-01',
        row: withCustomFields(
          account(`S${from + i}`, `City ${i % 97}`),
          new Map([
            ['tier', `t${i % 7}`],
            ['note', `note ${from + i} ${'x'.repeat(200)}`],
          ]),
        ),
      }));
      await other.append('accounts', batch);
    }
    expect((await pool(destination, 'IN_MEMORY_TABLE')).memory).toBeGreaterThan(40e6);

    await loadAccounts(destination, '2024-01-01', [{ row: account('C1', 'Athens'), fields: { tier: 'gold' } }]);

    expect(await tablePages(destination)).toBeLessThanOrEqual(Number(POOL_TRIM_HEADROOM));
    expect((await pool(destination, 'IN_MEMORY_TABLE')).spilled).toBe(0);
    await commitWindows(
      other,
      { job: 'j', stream: 'accounts', runId: 'other', firstDay: '2024-01-01' },
      [{ start: '2024-03-01', end: '2024-03-01' }],
      new Map([['2024-03-01', staged]]),
      1,
    );
    await destination.withConnection(async (conn) => {
      const [row] = await conn.all<{ n: number | string; fields: number | string }>(
        `SELECT (SELECT count(*) FROM accounts) AS n, (SELECT count(*) FROM account_custom_fields) AS fields`,
      );
      expect([Number(row!.n), Number(row!.fields)]).toEqual([staged + 1, 2 * staged + 1]);
    });
  });

  it('runs no statement of another connection while the pool is small, so none fails for want of memory', async () => {
    await destination.withConnection((conn) =>
      conn.run(`CREATE TABLE filler AS SELECT range AS id, md5(CAST(range AS VARCHAR)) AS text FROM range(1000000)`),
    );
    // a query whose hash table needs far more than the pool keeps between commits: run during a trim, it fails
    const heavy = () =>
      destination.withConnection((conn) =>
        conn.all<{ n: number | string }>(`SELECT count(DISTINCT text) AS n FROM filler`),
      );
    let committing = true;
    const commits = async () => {
      for (let day = 1; day <= 20; day++)
        await loadAccounts(destination, `2024-02-${String((day % 28) + 1).padStart(2, '0')}`, [
          { row: account(`C${day}`, 'Athens'), fields: { tier: 'gold' } },
        ]);
      committing = false;
    };
    // queries for as long as the commits go on: most of them meet a trim
    const queries = async () => {
      const counts = [];
      while (committing || counts.length < 4) counts.push(Number((await heavy())[0]!.n));
      return counts;
    };

    const [, counts] = await Promise.all([commits(), queries()]);

    expect(new Set(counts)).toEqual(new Set([1_000_000]));
    await destination.withConnection(async (conn) => {
      const [limit] = await conn.all<{ value: string }>(`SELECT current_setting('memory_limit') AS value`);
      expect(limit!.value).toBe('488.2 MiB');
      const [accounts] = await conn.all<{ n: number | string }>('SELECT COUNT(*) AS n FROM accounts');
      expect(Number(accounts!.n)).toBe(20);
    });
  });

  it('trims only once the statements under way have ended, and starts none until it is done', async () => {
    const instance = await DuckDBInstance.create(join(testTempDir('pool-trim-'), 'w.duckdb'));
    const [trimming, querying] = [await instance.connect(), await instance.connect()];
    // table pages in the pool, for the trim to give back
    await trimming.run(`CREATE TABLE filler AS SELECT md5(CAST(range AS VARCHAR)) AS text FROM range(500000)`);
    await trimming.run('CHECKPOINT');
    await trimming.run('SELECT max(text) FROM filler');
    const events: string[] = [];
    // the trim's connection, telling when each setting is made
    const logged = {
      run: async (sql: string) => {
        events.push(sql.replace(/.*= /, 'limit '));
        return trimming.run(sql);
      },
      runAndReadAll: async (sql: string) => {
        events.push('reads the pool');
        return trimming.runAndReadAll(sql);
      },
    } as unknown as DuckDBConnection;
    const gate = new PoolTrim('512MB');
    const query = (name: string) =>
      gate.statement(async () => {
        events.push(`${name} starts`);
        await querying.run(`SELECT count(DISTINCT md5(CAST(range AS VARCHAR))) FROM range(1000000)`);
        events.push(`${name} ends`);
      });
    try {
      const underWay = query('first');
      const trim = gate.trim(logged);
      const later = query('second');
      await Promise.all([underWay, trim, later]);
    } finally {
      instance.closeSync();
    }
    expect(events).toEqual([
      'first starts',
      'first ends',
      'reads the pool',
      expect.stringMatching(/^limit '\d+B'$/),
      "limit '512MB'",
      'second starts',
      'second ends',
    ]);
  });
});
