import { describe, expect, it } from 'vitest';
import { emulatorJobs, runCli } from '../helpers/cli.js';
import { testDestinations } from '../helpers/destinations.js';
import { readAccounts, withWarehouse } from '../helpers/warehouse-reader.js';
import { useEmulator } from '../helpers/suite-emulator.js';

const TZ = 'Europe/Athens';
const START = '2024-02-01';
const END = '2024-02-05';

describe.each(testDestinations)(
  'a service that spells the text NULL in other cases and spacing, into $name',
  (target) => {
    const emulator = useEmulator({
      seed: 12,
      accounts: 40,
      startDate: START,
      endDate: END,
      timezone: TZ,
      port: 0,
      readings: { missingText: 'varied' },
    });

    it('loads every such value as NULL, equal to the ground truth, with no field reject', async () => {
      // the service does send them
      const page = (await (
        await fetch(`${emulator.url}/business-data/accounts?start=${START}&end=${END}&page=1&size=500`)
      ).text()) as string;
      expect(page).toMatch(/" Null "|"null"|"nULL"|"NULL\\t"|" {2}null"/);
      const { config } = await target.fresh();
      const file = emulatorJobs({
        url: emulator.url,
        timezone: TZ,
        firstDay: START,
        destination: config,
        streams: ['accounts'],
      });
      const result = await runCli(['backfill', '--config', file, '--from', START, '--to', END]);
      expect(result.code, result.stderr.slice(-800)).toBe(0);
      await withWarehouse(config, async (conn) => {
        const truth = new Map([...emulator.truth.accounts(START, END)].map((a) => [a.customer_id, { ...a }]));
        expect(await readAccounts(conn)).toEqual(truth);
        const rejects = await conn.all<{ n: number | string }>(`SELECT COUNT(*) AS n FROM _etl_field_rejects`);
        expect(Number(rejects[0]!.n)).toBe(0);
      });
    }, 120_000);
  },
);
