import { beforeAll, describe, expect, it } from 'vitest';
import { addDays } from '../../src/plan/days.js';
import type { DestinationSettings } from '../../src/plan/job-plan.js';
import { emulatorJobs, runCli, type CliResult } from '../helpers/cli.js';
import { testDestinations } from '../helpers/destinations.js';
import {
  readAccounts,
  readPostings,
  readSurveyResponses,
  sortedByJson,
  withWarehouse,
} from '../helpers/warehouse-reader.js';
import { useEmulator } from '../helpers/suite-emulator.js';

const TZ = 'Europe/Athens';
/** A program running for almost two years before the pipeline was set up. */
const PROGRAM = { start: '2022-09-01', end: '2024-06-10' };
/** A test runs the CLI several times over the sweep of that history. */
const SLOW = 180_000;
/** The pipeline's first night: two weeks before the emulator's last day. */
const FIRST_DAY = '2024-05-27';
const STREAMS = ['accounts', 'surveys', 'loyalty_postings'];

describe.each(testDestinations)('the customer directory on $name', (target) => {
  /** The pipeline's first night, into a warehouse of its own, and the accounts requests it made: where the first two tests start. */
  let firstNight: { config: DestinationSettings; result: CliResult; accountsRequests: number };
  const emulator = useEmulator({
    seed: 33,
    accounts: 60,
    startDate: PROGRAM.start,
    endDate: PROGRAM.end,
    timezone: TZ,
    badRecordRate: 0.02,
    port: 0,
  });
  beforeAll(async () => {
    const { config } = await target.fresh();
    emulator.stats.reset();
    const result = await runCli(['run', '--config', jobsFile(config), '--until', PROGRAM.end]);
    firstNight = { config, result, accountsRequests: emulator.stats.requests('/business-data/accounts') };
  });

  function jobsFile(config: DestinationSettings): string {
    // source.history_start is left at its default: years of empty history before the program cost a few requests
    return emulatorJobs({
      url: emulator.url,
      timezone: TZ,
      firstDay: FIRST_DAY,
      destination: config,
      streams: STREAMS,
      pageSize: 50,
      historyStart: null,
    });
  }

  async function job() {
    emulator.stats.reset();
    const { config } = await target.fresh();
    return { config, file: jobsFile(config) };
  }

  /** A copy of the first night's warehouse, and a jobs file on it. */
  async function afterFirstNight() {
    expect(firstNight.result.code, firstNight.result.stderr).toBe(0);
    const { config } = await target.copy(firstNight.config);
    return { config, file: jobsFile(config) };
  }

  /** A customer created long before the first day, never changed since, with postings in the loaded weeks. */
  function quietCustomer(): string {
    const changedLately = new Set([...emulator.truth.accounts('2023-01-01', PROGRAM.end)].map((a) => a.customer_id));
    const withPostings = new Set(
      [...emulator.truth.postings(FIRST_DAY, PROGRAM.end)].map((p) => p.customer_id as string),
    );
    const quiet = [...emulator.truth.accounts(PROGRAM.start, '2022-12-31')].find(
      (a) => !changedLately.has(a.customer_id) && withPostings.has(a.customer_id),
    );
    expect(
      quiet,
      'the emulated program has a customer untouched since 2022 with postings in the loaded weeks',
    ).toBeDefined();
    return quiet!.customer_id;
  }

  it(
    'knows every customer of the program, and asks every one for postings, whatever first_day says',
    async () => {
      const { config, file } = await afterFirstNight();
      const run = firstNight.result;
      const sweep =
        /^customer directory, swept once so that every customer is known from \d{4}-\d\d-\d\d \(source\.history_start\) through \d{4}-\d\d-\d\d: ([\d,]+) accounts windows? read \([\d,]+ account versions?\); ([\d,]+) windows? held no account by the source's own count, so they were recorded done without reading them$/m.exec(
          run.stdout,
        );
      expect(sweep, run.stdout).not.toBeNull();
      // the 22 years before the program (from source.history_start's default) cost a few counts, not a request a day
      expect(Number(sweep![2]!.replaceAll(',', ''))).toBeGreaterThan(8000);
      // every window read costs a request; counting stretches (halving the sparse ones) costs a fraction more
      expect(firstNight.accountsRequests).toBeLessThan(Number(sweep![1]!.replaceAll(',', '')) * 1.5 + 50);

      const quiet = quietCustomer();
      const truthAccounts = new Map(
        [...emulator.truth.accounts(PROGRAM.start, PROGRAM.end)].map((a) => [a.customer_id, { ...a }]),
      );
      const truthPostings = sortedByJson([...emulator.truth.postings(FIRST_DAY, PROGRAM.end)].map((p) => ({ ...p })));
      const held = await withWarehouse(config, async (conn) => ({
        accounts: await readAccounts(conn),
        postings: sortedByJson(await readPostings(conn)),
      }));
      expect(held.accounts.get(quiet)).toEqual(truthAccounts.get(quiet));
      expect(held.postings.filter((p) => p.customer_id === quiet)).toEqual(
        truthPostings.filter((p) => p.customer_id === quiet),
      );
      expect(held.accounts.size).toBe(truthAccounts.size);
      expect(new Map([...held.accounts].sort())).toEqual(new Map([...truthAccounts].sort()));
      expect(held.postings).toEqual(truthPostings);

      // a second night reads only its own windows: the directory is swept once
      emulator.stats.reset();
      const again = await runCli(['run', '--config', file, '--until', PROGRAM.end]);
      expect(again.code, again.stderr).toBe(0);
      expect(again.stdout).not.toMatch(/customer directory/);
      expect(emulator.stats.requests()).toBeLessThan(10);

      // verify proves the directory, and names a customer that went missing from it
      const clean = await runCli(['verify', '--config', file, '--from', FIRST_DAY, '--to', PROGRAM.end]);
      expect(clean.code, clean.stdout + clean.stderr).toBe(0);
      expect(clean.stdout).toMatch(
        new RegExp(
          `customer directory \\d{4}-\\d{2}-\\d{2}\\.\\.${PROGRAM.end}: ${truthAccounts.size + [...emulator.truth.rejects('accounts', PROGRAM.start, PROGRAM.end)].length} customers at the source`,
        ),
      );
      expect(clean.stdout).toMatch(/^customer directory: complete$/m);
      await withWarehouse(config, (conn) => conn.run(`DELETE FROM accounts WHERE customer_id = $1`, [quiet]));
      const gap = await runCli(['verify', '--config', file, '--from', FIRST_DAY, '--to', PROGRAM.end]);
      expect(gap.code).toBe(4);
      expect(gap.stdout).toMatch(new RegExp(`^${quiet}\\s+\\d{4}-\\d{2}-\\d{2}\\s+deleted from accounts$`, 'm'));
      const lines = gap.stderr.split('\n').filter((l) => l.startsWith('loyalty-etl: '));
      expect(lines).toEqual([
        expect.stringMatching(
          new RegExp(
            `^loyalty-etl: verify: customer directory: 1 customer\\(s\\) missing from accounts; first: ${quiet} \\(re-load it with: backfill --from (\\S+) --to \\1\\)$`,
          ),
        ),
      ]);

      // the window it names brings the customer back
      const day = /backfill --from (\S+)/.exec(lines[0]!)![1]!;
      const reload = await runCli(['backfill', '--config', file, '--from', day, '--to', day, '--stream', 'accounts']);
      expect(reload.code, reload.stderr).toBe(0);
      expect((await runCli(['verify', '--config', file, '--from', FIRST_DAY, '--to', PROGRAM.end])).code).toBe(0);
    },
    SLOW,
  );

  it(
    'names a customer the source lists that no loaded window holds',
    async () => {
      const { config, file } = await afterFirstNight();
      const quiet = quietCustomer();
      // as if the window that listed the customer had been loaded without it
      await withWarehouse(config, async (conn) => {
        await conn.run(`DELETE FROM _etl_account_windows WHERE customer_id = $1`, [quiet]);
        await conn.run(`DELETE FROM accounts WHERE customer_id = $1`, [quiet]);
      });
      const gap = await runCli(['verify', '--config', file, '--from', FIRST_DAY, '--to', PROGRAM.end, '--json']);
      expect(gap.code).toBe(4);
      const report = JSON.parse(gap.stdout) as {
        directory: { missingTotal: number; missing: Array<{ customerId: string; why: string }> };
      };
      expect(report.directory.missingTotal).toBe(1);
      expect(report.directory.missing).toEqual([expect.objectContaining({ customerId: quiet, why: 'never loaded' })]);
    },
    SLOW,
  );

  it(
    'backfills a range before first_day as asked, loading the directory up to it first',
    async () => {
      const { config, file } = await job();
      const from = '2024-02-26';
      const to = '2024-03-06';
      const backfill = await runCli(['backfill', '--config', file, '--from', from, '--to', to]);
      expect(backfill.code, backfill.stderr).toBe(0);
      expect(backfill.stdout).not.toMatch(/nothing to/);
      // 26 February to 6 March 2024: ten days, a leap year's
      expect(backfill.stdout).toMatch(/: 30 of 30 windows done; 30 loaded by this worker/);
      await withWarehouse(config, async (conn) => {
        const windows = await conn.all<{ stream: string; n: number | string }>(
          `SELECT stream, COUNT(*) AS n FROM _etl_windows WHERE status = 'done' AND window_start >= CAST($1 AS DATE) AND window_start <= CAST($2 AS DATE) GROUP BY stream ORDER BY stream`,
          [from, to],
        );
        expect(windows.map((w) => [w.stream, Number(w.n)])).toEqual([
          ['accounts', 10],
          ['loyalty_postings', 10],
          ['surveys', 10],
        ]);
        expect(sortedByJson(await readPostings(conn))).toEqual(
          sortedByJson([...emulator.truth.postings(from, to)].map((p) => ({ ...p }))),
        );
        expect(sortedByJson(await readSurveyResponses(conn))).toEqual(
          sortedByJson([...emulator.truth.surveyResponses(from, to)].map((r) => ({ ...r }))),
        );
        // every customer created by the range's end is known: postings asked each of them
        const accounts = await readAccounts(conn);
        expect(accounts.size).toBe(
          new Map([...emulator.truth.accounts(PROGRAM.start, to)].map((a) => [a.customer_id, a])).size,
        );
        // history before first_day does not move the watermark: run still starts at first_day
        const marks = await conn.all(`SELECT stream FROM _etl_watermarks`);
        expect(marks).toEqual([]);
      });
      // the directory's windows are done; a run picks up at first_day without sweeping again
      const run = await runCli(['run', '--config', file, '--until', addDays(FIRST_DAY, 1)]);
      expect(run.code, run.stderr).toBe(0);
      expect(run.stdout).toMatch(
        /^customer directory, swept once so that every customer is known .*: [\d,]+ accounts windows? read/m,
      );
      expect(run.stdout).toMatch(/^accounts: 2 windows read/m);
    },
    SLOW,
  );
});
