import { existsSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { describe, expect, it } from 'vitest';
import { publishPathOf } from '../../src/config/duckdb-files.js';
import { emulatorJobs, runCli, startCli, writeJobsFile } from '../helpers/cli.js';
import { duckdbTestDestination } from '../helpers/destinations.js';
import { RequestGate, waitForOutput } from '../helpers/request-gate.js';
import { testTempDir } from '../helpers/temp-dir.js';
import { readAccounts, withWarehouse } from '../helpers/warehouse-reader.js';
import { useEmulator } from '../helpers/suite-emulator.js';

const TZ = 'Europe/Athens';
const FROM = '2024-06-01';
const MIDDLE = '2024-06-05';
const TO = '2024-06-10';

/** An analyst's session on a DuckDB file: read-only, kept open until closed. */
async function openSession(file: string) {
  const instance = await DuckDBInstance.create(file, { access_mode: 'READ_ONLY' });
  const conn = await instance.connect();
  return {
    count: async (table: string) =>
      Number((await conn.runAndReadAll(`SELECT COUNT(*) AS n FROM ${table}`)).getRowObjectsJson()[0]!.n),
    rows: async (sql: string) => (await conn.runAndReadAll(sql)).getRowObjectsJson(),
    close: () => {
      conn.closeSync();
      instance.closeSync();
    },
  };
}

describe('the read-only copy of a DuckDB warehouse, published for analysts', () => {
  const gate = new RequestGate();
  const emulator = useEmulator({
    seed: 21,
    accounts: 80,
    startDate: FROM,
    endDate: TO,
    timezone: TZ,
    port: 0,
    hooks: { middleware: [gate.middleware] },
  });

  const customersThrough = (day: string) => [...emulator.truth.customers(day)].length;

  it('a reader holding the copy open through a whole run never blocks it, and sees the previous state until the run publishes', async () => {
    const { config, warehouse } = await duckdbTestDestination.fresh();
    // the copy is compared with the warehouse itself: personal data as loaded
    const file = emulatorJobs({
      url: emulator.url,
      timezone: TZ,
      firstDay: FROM,
      destination: { ...config, analysts: { personal_data: 'keep' } },
    });
    const published = publishPathOf(config)!;
    expect(published).toBe(warehouse.replace(/\.duckdb$/, '.published.duckdb'));

    const first = await runCli(['run', '--config', file, '--until', MIDDLE]);
    expect(first.code, first.stderr.slice(-800)).toBe(0);
    expect(first.stdout).toContain(`published for readers: ${published} (`);
    expect(statSync(published).mode & 0o222).toBe(0); // read-only: a session cannot open it for writing by mistake
    const before = customersThrough(MIDDLE);
    expect(before).toBeLessThan(customersThrough(TO));

    // the analyst opens the copy and keeps it open through the next run
    const session = await openSession(published);
    try {
      expect(await session.count('accounts')).toBe(before);
      gate.close();
      const run = startCli(['run', '--config', file, '--until', TO]);
      try {
        await waitForOutput(run, /"run started"/);
        // in the middle of the run: the session still reads, and another analyst's query is answered from the copy
        expect(await session.count('accounts')).toBe(before);
        const query = await runCli(['sql', '--config', file, '--csv', 'SELECT COUNT(*) AS customers FROM accounts']);
        expect(query.code, query.stderr).toBe(0);
        expect(query.stdout).toBe(`customers\n${before}\n`);
      } finally {
        gate.openUp();
      }
      const done = await run.done;
      expect(done.code, done.stderr.slice(-800)).toBe(0);
      // the open session keeps the copy it opened; a new one opens the copy the run published
      expect(await session.count('accounts')).toBe(before);
    } finally {
      session.close();
    }
    // the new copy holds what the warehouse holds
    const everyAccount = `SELECT customer_id, phone, email, city, CAST(profile_set_at AS VARCHAR) AS at, _run_id FROM accounts ORDER BY customer_id`;
    const fresh = await openSession(published);
    let inCopy;
    try {
      expect(await fresh.count('accounts')).toBe(customersThrough(TO));
      // the pipeline's bookkeeping is out of the analysts' way: not in the copy
      expect(
        await fresh.rows(`SELECT table_name FROM duckdb_tables() WHERE table_name IN ('_etl_runs', '_etl_windows')`),
      ).toEqual([]);
      inCopy = await fresh.rows(everyAccount);
    } finally {
      fresh.close();
    }
    expect(inCopy).toEqual(await withWarehouse(config, (conn) => conn.all(everyAccount)));
    // an operator reads it in the pipeline's own file, and is told what that file is
    const runs = await runCli(['sql', '--config', file, '--pipeline', '--csv', 'SELECT status FROM _etl_runs']);
    expect(runs.code, runs.stderr).toBe(0);
    expect(runs.stdout).toBe('status\nsucceeded\nsucceeded\n');
    expect(runs.stderr).toMatch(/^note: reading the pipeline's own file .*: its tables hold personal data in clear/m);
  });

  it('publishes on demand; a publish that fails leaves the load done and exits 5 with one line; publish_path: false publishes nothing', async () => {
    const dir = testTempDir('publish-');
    const warehouse = join(dir, 'loyalty.duckdb');
    const blocked = join(dir, 'not-a-folder');
    writeFileSync(blocked, 'a file where the copy’s folder should be');
    const jobs = (publish: string) =>
      writeJobsFile(`
source:
  base_url: ${emulator.url}
  timezone: ${TZ}
  history_start: ${FROM}
  requests_per_second: 1000
destination:
  type: duckdb
  path: ${JSON.stringify(warehouse)}
  ${publish}
jobs:
  nightly:
    streams: [accounts]
    lookback_days: 0
    first_day: ${FROM}
`);
    const failing = await runCli([
      'run',
      '--config',
      jobs(`publish_path: ${JSON.stringify(join(blocked, 'copy.duckdb'))}`),
      '--until',
      TO,
    ]);
    expect(failing.code).toBe(5);
    const lines = failing.stderr.split('\n').filter((l) => l.startsWith('loyalty-etl: '));
    expect(lines).toEqual([
      expect.stringMatching(
        /^loyalty-etl: the load succeeded, but the readers' copy was not published: could not publish .*copy\.duckdb: .*; `loyalty-etl publish` tries again$/,
      ),
    ]);
    expect(failing.stdout).toMatch(/^readers' copy NOT published \(they keep the previous one\): /m);
    await withWarehouse({ type: 'duckdb', path: warehouse, schema: 'main' }, async (conn) => {
      expect((await readAccounts(conn)).size).toBe(customersThrough(TO));
    });

    const onDemand = join(dir, 'analysts', 'loyalty.duckdb');
    const publish = await runCli(['publish', '--config', jobs(`publish_path: ${JSON.stringify(onDemand)}`)]);
    expect(publish.code, publish.stderr).toBe(0);
    expect(publish.stdout).toContain(`published for readers: ${onDemand} (`);
    const session = await openSession(onDemand);
    try {
      expect(await session.count('accounts')).toBe(customersThrough(TO));
    } finally {
      session.close();
    }

    const off = await runCli(['run', '--config', jobs('publish_path: false'), '--until', TO]);
    expect(off.code, off.stderr.slice(-800)).toBe(0);
    expect(off.stdout).not.toContain('published');
    expect(existsSync(join(dir, 'loyalty.published.duckdb'))).toBe(false);
    const refused = await runCli(['publish', '--config', jobs('publish_path: false')]);
    expect([refused.code, refused.stderr]).toEqual([
      2,
      expect.stringMatching(/^loyalty-etl: publish: .*destination\.publish_path is false: publishing is off\n$/),
    ]);
  });
});
