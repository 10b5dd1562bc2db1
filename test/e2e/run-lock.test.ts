import { describe, expect, it } from 'vitest';
import { runCommand } from '../../src/commands/run.js';
import { emulatorJobs, runCli, startCli } from '../helpers/cli.js';
import { testDestinations } from '../helpers/destinations.js';
import { RequestGate, waitForOutput } from '../helpers/request-gate.js';
import { readAccounts, withWarehouse } from '../helpers/warehouse-reader.js';
import { useEmulator } from '../helpers/suite-emulator.js';
import { JobBusyError } from '../../src/state/state-errors.js';

const TZ = 'Europe/Athens';
const FROM = '2024-06-01';
const TO = '2024-06-10';

describe.each(testDestinations)('one run at a time on $name', (target) => {
  const gate = new RequestGate();
  const emulator = useEmulator({
    seed: 3,
    accounts: 60,
    startDate: FROM,
    endDate: TO,
    timezone: TZ,
    port: 0,
    hooks: { middleware: [gate.middleware] },
  });

  const truth = () => new Map([...emulator.truth.accounts(FROM, TO)].map((a) => [a.customer_id, { ...a }]));

  it('a run started while another runs exits 3 with one clear line, and nothing is corrupted', async () => {
    const { config } = await target.fresh();
    const file = emulatorJobs({ url: emulator.url, timezone: TZ, firstDay: FROM, destination: config });
    const args = ['run', '--config', file, '--until', TO];
    gate.close();
    const first = startCli(args);
    try {
      await waitForOutput(first, /"run started"/);
      // DuckDB: the file is busy, and a second run waits for it up to LOYALTY_BUSY_TIMEOUT_S before it gives up
      const second = await runCli(args, { LOYALTY_BUSY_TIMEOUT_S: '1' });
      expect(second.code).toBe(3);
      const lines = second.stderr.split('\n').filter((l) => l.startsWith('loyalty-etl: '));
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(
        target.name === 'duckdb'
          ? /is in use by another process \(PID \d+\); DuckDB allows one process per file; waited 1 s for it/
          : /job nightly is already running \(run [0-9a-f-]{36}, pid \d+ on .+\); nothing was attempted/,
      );
    } finally {
      gate.openUp();
    }
    const done = await first.done;
    expect(done.code, done.stderr.slice(-800)).toBe(0);
    await withWarehouse(config, async (conn) => {
      expect(await readAccounts(conn)).toEqual(truth());
      expect(await conn.all(`SELECT command, status FROM _etl_runs`)).toEqual([
        { command: 'run', status: 'succeeded' },
      ]);
      expect(await conn.all(`SELECT lock_name, run_id FROM _etl_locks`)).toEqual([
        { lock_name: 'run:nightly', run_id: null },
      ]);
      const [mark] = await conn.all<{ d: string }>(
        `SELECT CAST(complete_through AS VARCHAR) AS d FROM _etl_watermarks`,
      );
      expect(mark!.d).toBe(TO);
    });
  });

  it('a run killed while holding the lock does not block the next one', async () => {
    const { config } = await target.fresh();
    const file = emulatorJobs({ url: emulator.url, timezone: TZ, firstDay: FROM, destination: config });
    const args = ['run', '--config', file, '--until', TO];
    gate.close();
    const victim = startCli(args);
    try {
      await waitForOutput(victim, /"run started"/);
      victim.child.kill('SIGKILL');
      await victim.done;
    } finally {
      gate.openUp();
    }
    // its lease has a minute to run, but its process is gone: the next run goes ahead at once
    const next = await runCli(args);
    expect(next.code, next.stderr.slice(-800)).toBe(0);
    await withWarehouse(config, async (conn) => {
      expect(await readAccounts(conn)).toEqual(truth());
      expect(
        (await conn.all<{ status: string }>(`SELECT status FROM _etl_runs ORDER BY started_at`)).map((r) => r.status),
      ).toEqual(['abandoned', 'succeeded']);
    });
  });

  it('a holder on another machine blocks until its lease runs out', async () => {
    const { config } = await target.fresh();
    const file = emulatorJobs({ url: emulator.url, timezone: TZ, firstDay: FROM, destination: config });
    const holder = (expiresIn: string) =>
      withWarehouse(config, async (conn) => {
        await conn.run(`DELETE FROM _etl_runs WHERE run_id = 'elsewhere-run'`);
        await conn.run(
          `INSERT INTO _etl_runs (run_id, job, command, started_at, status, host, pid, expires_at) VALUES ('elsewhere-run', 'nightly', 'run', CURRENT_TIMESTAMP, 'running', 'another-host', 4242, CURRENT_TIMESTAMP + INTERVAL '${expiresIn}')`,
        );
        await conn.run(
          `INSERT INTO _etl_locks (lock_name, run_id, acquired_at) VALUES ('run:nightly', 'elsewhere-run', CURRENT_TIMESTAMP) ON CONFLICT (lock_name) DO UPDATE SET run_id = 'elsewhere-run'`,
        );
      });
    await holder('1 hour');
    const blocked = runCommand({ config: file, until: TO });
    if (target.name === 'postgres') {
      await expect(blocked).rejects.toThrow(JobBusyError);
      await expect(blocked).rejects.toThrow(
        /job nightly is already running \(run elsewhere-run, pid 4242 on another-host/,
      );
      await holder('-1 second');
      await runCommand({ config: file, until: TO });
    } else {
      // a DuckDB file is open in one process only: whoever opened it knows every other holder is gone
      await blocked;
    }
    await withWarehouse(config, async (conn) => {
      expect(await conn.all(`SELECT status FROM _etl_runs WHERE run_id = 'elsewhere-run'`)).toEqual([
        { status: 'abandoned' },
      ]);
      expect(await readAccounts(conn)).toEqual(truth());
    });
  });
});
