import { describe, expect, it } from 'vitest';
import { addDays, daysBetween } from '../../src/plan/days.js';
import { emulatorJobs, runCli, startCli } from '../helpers/cli.js';
import { duckdbTestDestination, postgresTestDestination } from '../helpers/destinations.js';
import { killAfter, RequestLog } from '../helpers/request-log.js';
import { readAccounts, withWarehouse } from '../helpers/warehouse-reader.js';
import { useEmulator } from '../helpers/suite-emulator.js';

const TZ = 'UTC';
const FROM = '2023-01-01';
const TWO_YEARS = '2024-12-30'; // 730 daily windows

/**
 * Daily windows cost ~26 ms each on PostgreSQL and ~60 ms on DuckDB on a 2-core machine (per-statement overhead
 * of the window's transaction); two years of them killed halfway and resumed take ~25 s on PostgreSQL. On
 * DuckDB the same would take ~50 s, so it runs the same test over one year.
 */
const CASES = [
  { destination: postgresTestDestination, to: TWO_YEARS },
  { destination: duckdbTestDestination, to: '2023-12-31' },
];

describe.each(CASES)('a daily backfill killed halfway into $destination.name, through $to', ({ destination, to }) => {
  const log = new RequestLog();
  const emulator = useEmulator({
    seed: 31,
    accounts: 40,
    startDate: FROM,
    endDate: TWO_YEARS,
    timezone: TZ,
    port: 0,
    hooks: { middleware: [log.middleware] },
  });

  it('resumes without re-extracting the windows it had done, and ends at the ground truth', async () => {
    const { config } = await destination.fresh();
    const file = emulatorJobs({ url: emulator.url, timezone: TZ, firstDay: FROM, destination: config, pageSize: 200 });
    const windows = daysBetween(FROM, to) + 1;
    const args = ['backfill', '--config', file, '--from', FROM, '--to', to, '--concurrency', '4'];

    log.clear();
    await killAfter(startCli(args, { LOYALTY_LOG_LEVEL: 'debug' }), /"window loaded"/, Math.floor(windows / 2));
    const firstPass = log.perWindow('/business-data/accounts');
    const done = await withWarehouse(config, async (conn) => {
      const rows = await conn.all<{ w: string; backfill_id: string }>(
        `SELECT CAST(window_start AS VARCHAR) AS w, backfill_id FROM _etl_windows WHERE stream = 'accounts' AND status = 'done' AND claimed_by IS NULL AND error IS NULL`,
      );
      expect(new Set(rows.map((r) => r.backfill_id)).size).toBe(1);
      const [mark] = await conn.all<{ d: string }>(
        `SELECT CAST(complete_through AS VARCHAR) AS d FROM _etl_watermarks`,
      );
      // the watermark stands at the end of the done windows that join the first day without a gap
      let through = addDays(FROM, -1);
      const starts = new Set(rows.map((r) => r.w));
      while (starts.has(addDays(through, 1))) through = addDays(through, 1);
      expect(mark!.d).toBe(through);
      return starts;
    });
    expect(done.size).toBeGreaterThanOrEqual(Math.floor(windows / 2));
    expect(done.size).toBeLessThan(windows);
    for (const w of done) expect(firstPass.get(w), w).toBe(1);

    log.clear();
    const resumed = await runCli(args);
    expect(resumed.code, resumed.stderr.slice(-800)).toBe(0);
    expect(resumed.stdout).toMatch(/\(joined\): \d+ of \d+ windows done/);
    const secondPass = log.perWindow('/business-data/accounts');
    const redone = [...secondPass.keys()].filter((w) => done.has(w));
    expect(redone).toEqual([]);
    expect(secondPass.size).toBe(windows - done.size);
    for (const [w, n] of secondPass) expect(n, w).toBe(1);
    // profiles are reference data, refreshed by the worker that started the backfill; no other request was repeated
    expect(log.count('/business-data/') + log.count('/accounts/profiles')).toBe(log.entries.length);

    await withWarehouse(config, async (conn) => {
      expect(await readAccounts(conn)).toEqual(
        new Map([...emulator.truth.accounts(FROM, to)].map((a) => [a.customer_id, { ...a }])),
      );
      const [mark] = await conn.all<{ d: string }>(
        `SELECT CAST(complete_through AS VARCHAR) AS d FROM _etl_watermarks`,
      );
      expect(mark!.d).toBe(to);
      const [windowRows] = await conn.all<{ n: number | string }>(
        `SELECT COUNT(*) AS n FROM _etl_windows WHERE status = 'done' AND claimed_by IS NULL`,
      );
      expect(Number(windowRows!.n)).toBe(windows);
      expect(await conn.all(`SELECT status FROM _etl_backfills`)).toEqual([{ status: 'done' }]);
      // the killed process's run is no longer shown as running
      const runs = await conn.all<{ status: string }>(`SELECT status FROM _etl_runs ORDER BY started_at`);
      expect(runs.map((r) => r.status)).toEqual(['abandoned', 'succeeded']);
    });
  });
});
