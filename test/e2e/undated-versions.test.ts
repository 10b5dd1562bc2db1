import { DateTime } from 'luxon';
import { describe, expect, it } from 'vitest';
import { emulatorJobs, runCli } from '../helpers/cli.js';
import { testDestinations } from '../helpers/destinations.js';
import { withWarehouse } from '../helpers/warehouse-reader.js';
import { useEmulator } from '../helpers/suite-emulator.js';

const TZ = 'Europe/Athens';
const START = '2024-02-01';
const END = '2024-02-08';

/** The day, in the job's zone, of an instant as the warehouse prints it. */
const dayOf = (instant: string) =>
  DateTime.fromSQL(instant.replace(/\+00(:00)?$/, ''), { zone: 'UTC' })
    .setZone(TZ)
    .toISODate()!;

describe.each(testDestinations)('an export serving current profiles for past windows, into $name', (target) => {
  // some records carry a profileSet that cannot be read: the source then gives no day for their version
  const emulator = useEmulator({
    seed: 5,
    accounts: 40,
    startDate: START,
    endDate: END,
    timezone: TZ,
    port: 0,
    badRecordRate: 0.3,
    readings: { accountsListing: 'current' },
  });

  it('never starts a version before the day its profileSet names, and says loudly, window by window, what it cannot date or did not see', async () => {
    const { config } = await target.fresh();
    const file = emulatorJobs({
      url: emulator.url,
      timezone: TZ,
      firstDay: START,
      destination: config,
      streams: ['accounts'],
    });
    const result = await runCli(['backfill', '--config', file, '--from', START, '--to', END], {
      LOYALTY_LOG_LEVEL: 'warn',
    });
    expect(result.code, result.stderr.slice(-800)).toBe(0);
    const versions = await withWarehouse(config, (conn) =>
      conn.all<{ customer_id: string; valid_from: string; set_at: string | null }>(
        `SELECT customer_id, CAST(valid_from AS VARCHAR) AS valid_from, CAST(profile_set_at AS VARCHAR) AS set_at FROM accounts_history`,
      ),
    );
    const dated = versions.filter((v) => v.set_at !== null);
    expect(dated.length).toBeGreaterThan(20);
    expect(dated.filter((v) => v.valid_from < dayOf(v.set_at!))).toEqual([]);
    // the versions the source gives no day for start at their window, and each such window says so
    const undated = await withWarehouse(config, (conn) =>
      conn.all<{ window: string; n: number | string }>(
        `SELECT CAST(_window_start AS VARCHAR) AS "window", COUNT(*) AS n FROM _etl_accounts_observations WHERE _set_on IS NULL GROUP BY 1 ORDER BY 1`,
      ),
    );
    expect(undated.length).toBeGreaterThan(0);
    const warnings = (text: string) =>
      result.stderr
        .split('\n')
        .filter((l) => l.includes(text))
        .map((l) => JSON.parse(l) as { window: string; records: number })
        .map((w) => [w.window, w.records])
        .sort();
    expect(warnings('served without a readable profileSet')).toEqual(
      undated.map((u) => [u.window, Number(u.n)]).sort(),
    );
    // the export served profiles set after their window: what held in between is unknown, and each window says so
    const later = await withWarehouse(config, (conn) =>
      conn.all<{ window: string; n: number | string }>(
        `SELECT CAST(_window_start AS VARCHAR) AS "window", COUNT(*) AS n FROM _etl_accounts_observations WHERE _set_on > _window_start GROUP BY 1 ORDER BY 1`,
      ),
    );
    expect(later.length).toBeGreaterThan(0);
    expect(warnings('served with a profileSet after the window')).toEqual(
      later.map((u) => [u.window, Number(u.n)]).sort(),
    );
  }, 180_000);
});
