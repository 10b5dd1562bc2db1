import { DuckDBInstance } from '@duckdb/node-api';
import { describe, expect, it } from 'vitest';
import { emulatorJobs, runCli, runCliProcess, startCli, writeJobsFile } from '../helpers/cli.js';
import { duckdbTestDestination } from '../helpers/destinations.js';
import { waitForOutput } from '../helpers/request-gate.js';
import { readAccounts, withWarehouse } from '../helpers/warehouse-reader.js';
import { useEmulator } from '../helpers/suite-emulator.js';

const TZ = 'Europe/Athens';
const FROM = '2024-06-01';
const TO = '2024-06-04';

/** An analyst's read-only session on the pipeline's own file, in this process, until closed. */
async function holdFile(path: string): Promise<() => void> {
  const instance = await DuckDBInstance.create(path, { access_mode: 'READ_ONLY' });
  const conn = await instance.connect();
  await conn.run('SELECT COUNT(*) FROM _etl_runs');
  return () => {
    conn.closeSync();
    instance.closeSync();
  };
}

describe('run and backfill finding the DuckDB file held by another process', () => {
  const emulator = useEmulator({ seed: 4, accounts: 30, startDate: FROM, endDate: TO, timezone: TZ, port: 0 });

  /** A warehouse that exists (its tables created), and a jobs file for it. */
  async function warehouse() {
    const { config, warehouse: path } = await duckdbTestDestination.fresh();
    await withWarehouse(config, async () => undefined);
    return {
      config,
      path,
      file: emulatorJobs({ url: emulator.url, timezone: TZ, firstDay: FROM, destination: config }),
    };
  }

  it('a run waits, saying for whom, and loads once the session closes', async () => {
    const { config, path, file } = await warehouse();
    const release = await holdFile(path);
    let released = false;
    const run = startCli(['run', '--config', file, '--until', TO], { LOYALTY_BUSY_TIMEOUT_S: '60' });
    try {
      await waitForOutput(
        run,
        new RegExp(
          `is in use by another process \\(PID ${process.pid}\\); DuckDB allows one process per file: waiting for process ${process.pid} \\(.+\\) to close it, up to 60 s`,
        ),
      );
      release();
      released = true;
    } finally {
      if (!released) release();
    }
    const done = await run.done;
    expect(done.code, done.stderr.slice(-800)).toBe(0);
    expect(done.stderr).toContain('"msg":"warehouse free: going on"');
    await withWarehouse(config, async (conn) =>
      expect((await readAccounts(conn)).size).toBe([...emulator.truth.customers(TO)].length),
    );
  });

  it('gives up with exit 3 and one line once busy_timeout_s (or LOYALTY_BUSY_TIMEOUT_S) has passed; a bad value is exit 2', async () => {
    const { path } = await warehouse();
    const file = writeJobsFile(`
source:
  base_url: ${emulator.url}
  timezone: ${TZ}
  history_start: ${FROM}
destination:
  type: duckdb
  path: ${JSON.stringify(path)}
  busy_timeout_s: 1
jobs:
  nightly:
    streams: [accounts]
    first_day: ${FROM}
`);
    const release = await holdFile(path);
    try {
      for (const [args, env] of [
        [['backfill', '--from', FROM, '--to', TO], {}],
        [['run', '--until', TO], { LOYALTY_BUSY_TIMEOUT_S: '0' }],
      ] as const) {
        // a process of its own: DuckDB's lock holds between processes, and the file is held by this one
        const result = await runCliProcess([...args, '--config', file], env);
        expect(result.code).toBe(3);
        const lines = result.stderr.split('\n').filter((l) => l.startsWith('loyalty-etl: '));
        const waited =
          'LOYALTY_BUSY_TIMEOUT_S' in env
            ? '$'
            : '; waited 1 s for it \\(destination.busy_timeout_s, LOYALTY_BUSY_TIMEOUT_S\\)$';
        expect(lines).toEqual([
          expect.stringMatching(
            new RegExp(
              `^loyalty-etl: warehouse .* is in use by another process \\(PID ${process.pid}\\); DuckDB allows one process per file${waited}`,
            ),
          ),
        ]);
      }
      const bad = await runCli(['run', '--config', file], { LOYALTY_BUSY_TIMEOUT_S: 'soon' });
      expect([bad.code, bad.stderr]).toEqual([
        2,
        'loyalty-etl: LOYALTY_BUSY_TIMEOUT_S: soon is not a whole number of seconds from 0 to 86400\n',
      ]);
    } finally {
      release();
    }
  });
});
