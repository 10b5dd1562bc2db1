import { describe, expect, it } from 'vitest';
import { emulatorJobs, runCli } from '../helpers/cli.js';
import { testDestinations } from '../helpers/destinations.js';
import { readAccounts, readPostings, readSurveyResponses, withWarehouse } from '../helpers/warehouse-reader.js';
import { useEmulator } from '../helpers/suite-emulator.js';

const TZ = 'Europe/Athens';
/** The service's program: ten weeks of history. */
const PROGRAM = { start: '2024-04-01', end: '2024-06-10' };
/** A job whose first day is long before that: fifteen months of windows the source holds nothing for. */
const FIRST_DAY = '2023-01-01';
const CUSTOMERS = 60;
const EMPTY_WINDOWS = 456; // 2023-01-01 .. 2024-03-31
const WINDOWS_WITH_DATA = 71; // 2024-04-01 .. 2024-06-10

describe.each(testDestinations)('a first run from a first_day long before the source has data, on $name', (target) => {
  const emulator = useEmulator({
    seed: 28,
    accounts: CUSTOMERS,
    startDate: PROGRAM.start,
    endDate: PROGRAM.end,
    timezone: TZ,
    port: 0,
  });

  it('records the empty stretch done with a few counts, asks nobody for postings before the first customer, and loads everything', async () => {
    const { config } = await target.empty();
    const file = emulatorJobs({
      url: emulator.url,
      timezone: TZ,
      firstDay: FIRST_DAY,
      destination: config,
      streams: ['accounts', 'surveys', 'loyalty_postings'],
      pageSize: 500,
    });
    const run = await runCli(['run', '--config', file, '--until', PROGRAM.end]);
    expect(run.code, run.stderr.slice(-800)).toBe(0);
    for (const stream of ['accounts', 'surveys']) {
      const line = new RegExp(
        `^${stream}: (\\d+) windows read, .*; (\\d+) windows the source reports empty, recorded without reading them$`,
        'm',
      ).exec(run.stdout);
      expect(line, run.stdout).not.toBeNull();
      const [read, empty] = [Number(line![1]), Number(line![2])];
      expect(read + empty).toBe(EMPTY_WINDOWS + WINDOWS_WITH_DATA);
      // counting finds empty stretches of 8 windows and more: the days beside the data may be read one by one
      expect(empty).toBeGreaterThan(EMPTY_WINDOWS - 8);
    }
    // a window read costs one request here; the empty stretch a few counts, not one request per day
    expect(emulator.stats.requests('/business-data/accounts')).toBeLessThan(WINDOWS_WITH_DATA + 30);
    expect(emulator.stats.requests('/business-data/surveys')).toBeLessThan(WINDOWS_WITH_DATA + 30);
    // postings spans start where the first customer appears: ten weeks are three spans of 31 days, and a span
    // asks only the customers listed by its end (before: every customer, in each of the run's 17 spans)
    expect(emulator.stats.requests('/accounts/loyalty/postings')).toBeLessThanOrEqual(CUSTOMERS * 3);

    await withWarehouse(config, async (conn) => {
      expect((await readAccounts(conn)).size).toBe(
        new Set([...emulator.truth.accounts(PROGRAM.start, PROGRAM.end)].map((a) => a.customer_id)).size,
      );
      expect((await readSurveyResponses(conn)).length).toBe(
        [...emulator.truth.surveyResponses(PROGRAM.start, PROGRAM.end)].length,
      );
      expect((await readPostings(conn)).length).toBe([...emulator.truth.postings(FIRST_DAY, PROGRAM.end)].length);
      const [windows] = await conn.all<{ n: string | number }>(
        `SELECT COUNT(*) AS n FROM ${conn.schemaSql}._etl_windows WHERE status = 'done'`,
      );
      expect(Number(windows!.n)).toBe(3 * (EMPTY_WINDOWS + WINDOWS_WITH_DATA));
    });
  }, 120_000);
});
