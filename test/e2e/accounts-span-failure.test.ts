import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backfillCommand } from '../../src/commands/backfill.js';
import { startEmulator, type Emulator, type Middleware } from '../../src/emulator/index.js';
import { emulatorJobs } from '../helpers/cli.js';
import { testDestinations } from '../helpers/destinations.js';
import { readAccounts, withWarehouse } from '../helpers/warehouse-reader.js';

const RANGE = { startDate: '2024-02-01', endDate: '2024-02-10' } as const;
const BROKEN_DAY = '2024-02-06';
const TZ = 'Europe/Athens';

describe.each(testDestinations)('an accounts span whose sixth window cannot be read, into $name', (target) => {
  let emulator: Emulator;
  let broken = true;
  /** The export of one day answers 500 to every request while `broken`. */
  const breakOneDay: Middleware = async (request, next) => {
    if (broken && request.path === '/business-data/accounts' && request.query.get('start') === BROKEN_DAY) {
      return { status: 500, headers: {}, body: '{"code":500,"message":"Internal server error"}' };
    }
    return next(request);
  };
  beforeAll(async () => {
    emulator = await startEmulator({ seed: 23, accounts: 120, ...RANGE, timezone: TZ, port: 0, hooks: { middleware: [breakOneDay] } });
  });
  afterAll(async () => emulator.close());

  it('commits the five windows read before it, fails it and the four after, and the re-run reaches the ground truth', async () => {
    const { config } = await target.fresh();
    const file = emulatorJobs({
      url: emulator.url,
      timezone: TZ,
      firstDay: RANGE.startDate,
      destination: config,
      streams: ['accounts'],
      pageSize: 5,
      sourceKeys: { retries: 1, backoff_base_ms: 5, backoff_max_ms: 10 },
    });
    // ten 1-day windows in spans of several (an accounts span holds up to 31 days): the broken day is in the middle of one
    await expect(backfillCommand({ config: file, from: RANGE.startDate, to: RANGE.endDate, concurrency: '1' })).rejects.toThrow(
      /5 window\(s\) failed; first: accounts 2024-02-06/,
    );
    await withWarehouse(config, async (conn) => {
      const windows = await conn.all<{ w: string; status: string; run_id: string }>(
        `SELECT CAST(window_start AS VARCHAR) AS w, status, run_id FROM _etl_windows ORDER BY window_start`,
      );
      expect(windows.map((w) => [w.w, w.status])).toEqual([
        ['2024-02-01', 'done'],
        ['2024-02-02', 'done'],
        ['2024-02-03', 'done'],
        ['2024-02-04', 'done'],
        ['2024-02-05', 'done'],
        ['2024-02-06', 'failed'],
        ['2024-02-07', 'failed'],
        ['2024-02-08', 'failed'],
        ['2024-02-09', 'failed'],
        ['2024-02-10', 'failed'],
      ]);
      // exactly the first five windows' versions, none of the rest (the broken window's pages read before it broke included)
      const truth = new Map([...emulator.truth.accounts(RANGE.startDate, '2024-02-05')].map((a) => [a.customer_id, { ...a }]));
      expect(await readAccounts(conn)).toEqual(truth);
      const [late] = await conn.all<{ n: number | string }>(`SELECT COUNT(*) AS n FROM _etl_account_windows WHERE _window_start >= CAST($1 AS DATE)`, [
        BROKEN_DAY,
      ]);
      expect(Number(late!.n)).toBe(0);
      const [mark] = await conn.all<{ d: string }>(`SELECT CAST(complete_through AS VARCHAR) AS d FROM _etl_watermarks WHERE stream = 'accounts'`);
      expect(mark!.d).toBe('2024-02-05');
    });

    broken = false;
    await backfillCommand({ config: file, from: RANGE.startDate, to: RANGE.endDate, concurrency: '1' });
    await withWarehouse(config, async (conn) => {
      const truth = new Map([...emulator.truth.accounts(RANGE.startDate, RANGE.endDate)].map((a) => [a.customer_id, { ...a }]));
      expect(await readAccounts(conn)).toEqual(truth);
      const statuses = await conn.all<{ status: string }>(`SELECT DISTINCT status FROM _etl_windows`);
      expect(statuses).toEqual([{ status: 'done' }]);
    });
  });
});
