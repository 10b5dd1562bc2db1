import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator, type Emulator } from '../../src/emulator/index.js';
import { RELEASE } from '../../src/load/warehouse/package-root.js';
import { addDays } from '../../src/plan/days.js';
import type { DestinationSettings } from '../../src/plan/job-plan.js';
import { emulatorJobs, runCli, runCliProcess } from '../helpers/cli.js';
import { testDestinations } from '../helpers/destinations.js';
import { buildRelease } from '../helpers/release-build.js';
import { dumpTables } from '../helpers/table-dump.js';
import { withWarehouse } from '../helpers/warehouse-reader.js';
import { PREVIOUS_RELEASE } from './releases.js';

const TZ = 'Europe/Athens';
const FIRST_DAY = '2024-05-01';
const OLD_NIGHTS = ['2024-05-03', '2024-05-04'];
const NEW_NIGHTS = ['2024-05-05', '2024-05-06'];

/**
 * The loyalty state is observed when it is asked, so two warehouses built one after the other hold other instants
 * for the same answers: those columns of the state's tables are left out of the comparison (their rows are not).
 */
function askedWhen(table: string, column: string): boolean {
  return (
    /(loyalty_status|loyalty_wallets|loyalty_balance_details|vouchers|customer_observations)/.test(table) &&
    /(_at|^valid_from|^valid_to)$/.test(column)
  );
}

describe.each(testDestinations)('an upgrade from the previous release, on $name', (target) => {
  let emulator: Emulator;
  let previous: string;
  beforeAll(async () => {
    [emulator, previous] = await Promise.all([
      startEmulator({
        seed: 23,
        accounts: 25,
        startDate: FIRST_DAY,
        endDate: addDays(NEW_NIGHTS.at(-1)!, 1),
        timezone: TZ,
        badRecordRate: 0.03,
        port: 0,
      }),
      buildRelease(PREVIOUS_RELEASE.version, PREVIOUS_RELEASE.commit),
    ]);
  }, 240_000);
  afterAll(async () => emulator?.close());

  const jobsFor = (destination: DestinationSettings) =>
    emulatorJobs({
      url: emulator.url,
      timezone: TZ,
      firstDay: FIRST_DAY,
      destination,
      lookbackDays: 1,
      streams: ['accounts', 'surveys', 'loyalty_postings', 'loyalty_status', 'vouchers'],
    });

  it(`keeps a warehouse ${PREVIOUS_RELEASE.version} wrote: further nights leave what this release alone would`, async () => {
    const upgraded = await target.empty();
    const upgradedJobs = jobsFor(upgraded.config);
    for (const night of OLD_NIGHTS) {
      const old = await runCliProcess(['run', '--config', upgradedJobs, '--until', night], {}, undefined, previous);
      expect(old.code, `${PREVIOUS_RELEASE.version} on ${night}: ${old.stderr}`).toBe(0);
    }
    const version = await runCliProcess(['--version'], {}, undefined, previous);
    expect(version.stdout.trim(), 'the previous release printed the version it was built with').not.toBe(RELEASE);
    for (const night of NEW_NIGHTS) {
      const now = await runCli(['run', '--config', upgradedJobs, '--until', night]);
      expect(now.code, `${RELEASE} on ${night}: ${now.stderr}`).toBe(0);
    }

    const alone = await target.empty();
    const aloneJobs = jobsFor(alone.config);
    for (const night of [...OLD_NIGHTS, ...NEW_NIGHTS]) {
      const now = await runCli(['run', '--config', aloneJobs, '--until', night]);
      expect(now.code, `${RELEASE} alone on ${night}: ${now.stderr}`).toBe(0);
    }

    const dumpOf = (config: DestinationSettings) =>
      withWarehouse(config, (conn) => dumpTables(conn, config.schema, askedWhen));
    const [after, expected] = [await dumpOf(upgraded.config), await dumpOf(alone.config)];
    expect([...after.keys()].sort()).toEqual([...expected.keys()].sort());
    const differ = [...expected].filter(([t, rows]) => JSON.stringify(after.get(t)) !== JSON.stringify(rows));
    expect(
      differ.map(([t]) => t),
      'tables whose rows differ',
    ).toEqual([]);
    for (const table of [
      'loyalty_postings',
      'survey_answers',
      'accounts_history',
      'loyalty_status_history',
      'vouchers',
    ])
      expect(expected.get(table)?.length, table).toBeGreaterThan(0);

    const status = JSON.parse((await runCli(['status', '--config', upgradedJobs, '--json'])).stdout) as {
      warehouseRelease: { openedBy: string };
    };
    expect(status.warehouseRelease.openedBy).toBe(RELEASE);
  }, 240_000);
});
