import { describe, expect, it } from 'vitest';
import type { JobStatus } from '../../src/state/status-report.js';
import { emulatorJobs, runCli, startCli } from '../helpers/cli.js';
import { testDestinations } from '../helpers/destinations.js';
import { readAccounts, withWarehouse } from '../helpers/warehouse-reader.js';
import { useEmulator } from '../helpers/suite-emulator.js';

const TZ = 'Europe/Athens';
const START = '2024-02-01';
const END = '2024-02-29';
const STREAMS = ['accounts', 'surveys', 'loyalty_postings'];

/** Resolves once `output()` holds `count` matches of `pattern`. */
async function waitFor(output: () => string, pattern: RegExp, count: number): Promise<void> {
  while ((output().match(new RegExp(pattern, 'g')) ?? []).length < count) await new Promise((r) => setTimeout(r, 20));
}

describe.each(testDestinations)('a run interrupted by a signal, on $name', (target) => {
  const emulator = useEmulator({
    seed: 12,
    accounts: 80,
    startDate: START,
    endDate: END,
    timezone: TZ,
    faults: { latencyMs: 20 },
  });

  async function interrupted(signal: NodeJS.Signals) {
    const { config, file, cli } = await started();
    cli.child.kill(signal);
    return { config, file, result: await cli.done };
  }

  /** A run under way, past its first few windows. */
  async function started() {
    const { config } = await target.fresh();
    const file = emulatorJobs({
      url: emulator.url,
      timezone: TZ,
      firstDay: START,
      destination: config,
      streams: STREAMS,
      pageSize: 10,
    });
    const cli = startCli(['run', '--config', file, '--until', END], { LOYALTY_LOG_LEVEL: 'debug' });
    await waitFor(cli.output, /"window loaded"/, 3);
    return { config, file, cli };
  }

  it('SIGINT: spans under way called off, the run recorded as interrupted, lock and claims released, one line, exit 130; the next run completes it', async () => {
    const { config, file, result } = await interrupted('SIGINT');
    expect(result.code, result.stderr).toBe(130);
    const lines = result.stderr.trim().split('\n');
    expect(lines.at(-1)).toBe(
      'loyalty-etl: interrupted by SIGINT: the windows under way were called off and the run is recorded as interrupted; the next run takes them',
    );
    expect(lines.filter((l) => l.startsWith('loyalty-etl:'))).toHaveLength(1);
    expect(result.stderr).not.toMatch(/window failed/);

    const status = await runCli(['status', '--config', file, '--json']);
    expect(status.code, status.stderr).toBe(0);
    const report = JSON.parse(status.stdout) as JobStatus;
    expect(report.runs[0]).toMatchObject({ status: 'interrupted', command: 'run' });
    expect(report.runLock).toBeNull();
    await withWarehouse(config, async (conn) => {
      const held = await conn.all(
        `SELECT window_start FROM _etl_windows WHERE claimed_by IS NOT NULL OR status = 'failed'`,
      );
      expect(held).toEqual([]);
    });

    // what was committed is whole: the next run loads the rest and the warehouse equals the source
    const next = await runCli(['run', '--config', file, '--until', END]);
    expect(next.code, next.stderr).toBe(0);
    await withWarehouse(config, async (conn) => {
      const accounts = await readAccounts(conn);
      expect(accounts.size).toBe(new Set([...emulator.truth.accounts(START, END)].map((a) => a.customer_id)).size);
      const [postings] = await conn.all<{ n: number | string }>(`SELECT COUNT(*) AS n FROM loyalty_postings`);
      expect(Number(postings!.n)).toBe([...emulator.truth.postings(START, END)].length);
    });
  });

  it('SIGTERM: the same, exit 143', async () => {
    const { file, result } = await interrupted('SIGTERM');
    expect(result.code, result.stderr).toBe(143);
    expect(result.stderr.trim().split('\n').at(-1)).toMatch(/^loyalty-etl: interrupted by SIGTERM: /);
    const report = JSON.parse((await runCli(['status', '--config', file, '--json'])).stdout) as JobStatus;
    expect(report.runs[0]!.status).toBe('interrupted');
  });

  // the end of a stopping run is held up by a lock another session keeps on the ledger: the user presses Ctrl-C again
  it.runIf(target.name === 'postgres')(
    'a second SIGINT ends the process at once, while the first is still winding the run down',
    async () => {
      const { config, cli } = await started();
      const result = await withWarehouse(config, (conn) =>
        conn.transaction(async () => {
          await conn.run('LOCK TABLE _etl_runs IN ACCESS EXCLUSIVE MODE');
          cli.child.kill('SIGINT');
          // two signals sent back to back may arrive as one: the second comes once the first is being handled
          await new Promise((r) => setTimeout(r, 500));
          expect(cli.child.exitCode).toBeNull();
          cli.child.kill('SIGINT');
          return cli.done;
        }),
      );
      expect(result.code, result.stderr).toBe(130);
      expect(result.stderr.trim().split('\n').at(-1)).toBe('loyalty-etl: SIGINT again: stopped at once');
    },
  );
});
