import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Emulator, type EmulatorReadings, startEmulator } from '../../src/emulator/index.js';
import type { DestinationSettings } from '../../src/plan/job-plan.js';
import { emulatorJobs, runCli } from '../helpers/cli.js';
import { testDestinations } from '../helpers/destinations.js';
import { truthContents, warehouseContents } from '../helpers/ground-truth.js';
import { readLoyaltyState, truthState } from '../helpers/loyalty-state-reader.js';
import { rows, withWarehouse } from '../helpers/warehouse-reader.js';

/**
 * Services that read what the spec leaves open another way than our emulator's default: the pipeline loads each
 * exactly. Ten days around the Athens clock change, 30 customers, every stream the readings touch.
 */
const TZ = 'Europe/Athens';
const RANGE = { startDate: '2024-10-21', endDate: '2024-10-30' } as const;
const CLOCK = Date.parse('2024-10-31T08:00:00Z');
const STREAMS = ['accounts', 'surveys', 'loyalty_postings', 'loyalty_status', 'vouchers'];

/** Each service reads several conventions its own way; where only the operator can say, the jobs file says it. */
const SERVICES: Array<{ name: string; readings: EmulatorReadings; source: Record<string, string | number> }> = [
  {
    name: '1xxx errors as HTTP 200 {"error":{…}}, numbers and booleans as strings, the samples field names',
    readings: { errorStatus: 200, errorBody: 'nested', scalars: 'strings', fieldNames: 'sample' },
    source: {},
  },
  {
    name: '1xxx errors as HTTP 500 text, zone abbreviations, pages numbered from 0 (source.first_page: 0)',
    readings: { errorStatus: 500, errorBody: 'text', zoneLabels: 'abbreviations', firstPage: 0 },
    source: { first_page: 0 },
  },
  {
    name: '1xxx errors as HTTP 400 {"status":"error","errorCode":"1005"}, zone offsets, exports whose end day is excluded (source.export_end: exclusive)',
    readings: { errorStatus: 400, errorBody: 'status-fields', zoneLabels: 'offsets', exportEnd: 'exclusive' },
    source: { export_end: 'exclusive' },
  },
];

describe.each(testDestinations)('services reading the spec their own way, into $name', (target) => {
  const emulators: Emulator[] = [];
  beforeAll(async () => {
    for (const service of SERVICES)
      emulators.push(
        await startEmulator({
          seed: 34,
          accounts: 30,
          ...RANGE,
          timezone: TZ,
          port: 0,
          clock: () => CLOCK,
          readings: service.readings,
        }),
      );
  });
  afterAll(() => Promise.all(emulators.map((e) => e.close())));

  /** Every table the streams load, and the profiles, in the shapes of the ground truth. */
  async function held(config: DestinationSettings) {
    const contents = await warehouseContents(config);
    const state = await withWarehouse(config, readLoyaltyState);
    const profiles = await withWarehouse(config, (conn) =>
      rows(conn, 'SELECT profile_id, main, used FROM profiles ORDER BY profile_id'),
    );
    const fields = await withWarehouse(config, (conn) =>
      rows(conn, 'SELECT count(*) AS n FROM profile_fields WHERE required IS NOT NULL'),
    );
    return { contents, state, profiles, fields: Number(fields[0]!.n) };
  }

  it.each(SERVICES.map((service, n) => ({ ...service, n })))(
    '$name: the warehouse equals the ground truth, and loading it again changes nothing',
    async ({ n, source }) => {
      const emulator = emulators[n]!;
      const { config } = await target.fresh();
      const file = emulatorJobs({
        url: emulator.url,
        timezone: TZ,
        firstDay: RANGE.startDate,
        destination: config,
        streams: STREAMS,
        pageSize: 7,
        sourceKeys: source,
        postings: '    sweep_days: 1\n',
      });
      const first = await runCli(['run', '--config', file, '--until', RANGE.endDate]);
      expect(first.code, first.stderr).toBe(0);

      const loaded = await held(config);
      const truth = truthContents(emulator, RANGE.startDate, RANGE.endDate);
      expect(loaded.contents.accounts.size).toBe(30);
      expect(loaded.contents.accounts).toEqual(truth.accounts);
      expect(loaded.contents.surveys.length).toBeGreaterThan(0);
      expect(loaded.contents.surveys).toEqual(truth.surveys);
      expect(loaded.contents.postings.length).toBeGreaterThan(0);
      expect(loaded.contents.postings).toEqual(truth.postings);
      const state = truthState(emulator.truth);
      expect(loaded.state.status).toHaveLength(30);
      expect(loaded.state).toEqual(state);
      const listed = (await (await fetch(`${emulator.url}/accounts/profiles/`)).json()) as Array<{
        id: unknown;
        main: unknown;
        used: unknown;
      }>;
      expect(loaded.profiles).toEqual(
        listed.map((p) => ({
          profile_id: Number(p.id),
          main: String(p.main) === 'true',
          used: String(p.used) === 'true',
        })),
      );
      expect(loaded.fields).toBeGreaterThan(0);

      const again = await runCli(['backfill', '--config', file, '--from', RANGE.startDate, '--to', RANGE.endDate]);
      expect(again.code, again.stderr).toBe(0);
      expect(await held(config)).toEqual(loaded);
    },
    240_000,
  );
});
