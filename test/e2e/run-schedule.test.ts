import { describe, expect, it } from 'vitest';
import { runCommand } from '../../src/commands/run.js';
import { addDays, lastClosedDay } from '../../src/plan/days.js';
import { emulatorJobs } from '../helpers/cli.js';
import { duckdbTestDestination } from '../helpers/destinations.js';
import { readAccounts, withWarehouse } from '../helpers/warehouse-reader.js';
import { useEmulator } from '../helpers/suite-emulator.js';

// far from UTC, so that the zone's last closed day and UTC's differ for much of the day
const TZ = 'Pacific/Kiritimati';

describe('run, as a scheduler starts it (no --until)', () => {
  const yesterday = lastClosedDay(TZ);
  const firstDay = addDays(yesterday, -4);
  const emulator = useEmulator({
    seed: 9,
    accounts: 50,
    startDate: addDays(firstDay, -10),
    endDate: yesterday,
    timezone: TZ,
    port: 0,
  });

  it('loads from the job first day to the last closed day in the source zone, then re-reads only the look-back', async () => {
    const { config } = await duckdbTestDestination.fresh();
    const file = emulatorJobs({ url: emulator.url, timezone: TZ, firstDay, destination: config, lookbackDays: 2 });
    const windowsOfLastRun = () =>
      withWarehouse(config, async (conn) => {
        const [run] = await conn.all<{ run_id: string }>(
          `SELECT run_id FROM _etl_runs ORDER BY started_at DESC LIMIT 1`,
        );
        const rows = await conn.all<{ w: string }>(
          `SELECT CAST(window_start AS VARCHAR) AS w FROM _etl_windows WHERE run_id = $1 ORDER BY 1`,
          [run!.run_id],
        );
        const [mark] = await conn.all<{ d: string }>(
          `SELECT CAST(complete_through AS VARCHAR) AS d FROM _etl_watermarks`,
        );
        return { windows: rows.map((r) => r.w), watermark: mark!.d, accounts: await readAccounts(conn) };
      });

    await runCommand({ config: file });
    const first = await windowsOfLastRun();
    expect(first.windows).toEqual([0, 1, 2, 3, 4].map((n) => addDays(firstDay, n)));
    expect(first.watermark).toBe(yesterday);
    // nothing before the first day was asked for
    expect(first.accounts).toEqual(
      new Map([...emulator.truth.accounts(firstDay, yesterday)].map((a) => [a.customer_id, { ...a }])),
    );

    await runCommand({ config: file });
    const second = await windowsOfLastRun();
    expect(second.windows).toEqual([addDays(yesterday, -1), yesterday]);
    expect(second.watermark).toBe(yesterday);
  });
});
