import { readFileSync } from 'node:fs';
import { DateTime } from 'luxon';
import { beforeAll, describe, expect, it } from 'vitest';
import { backfillCommand } from '../../src/commands/backfill.js';
import type { Emulator } from '../../src/emulator/index.js';
import { addDays, daysBetween } from '../../src/plan/days.js';
import { inOrderHistory, readHistory, type ServedWindow, type Version } from '../helpers/account-history.js';
import { emulatorJobs, runCli, startCli } from '../helpers/cli.js';
import { testDestinations, unpublished } from '../helpers/destinations.js';
import { withWarehouse } from '../helpers/warehouse-reader.js';
import { useEmulator } from '../helpers/suite-emulator.js';

const TZ = 'Europe/Athens';
const START = '2024-06-01';
const END = '2024-06-10';
/** The nights a customer is modified through the service's write endpoint, after the seeded range. */
const NIGHTS = ['2024-06-12', '2024-06-14', '2024-06-16'];
const LAST = NIGHTS.at(-1)!;
const CITIES = ['Ναύπλιο', 'Volos', 'Chania'];

/** Every window's export, as the ground truth says it serves it. */
function servedWindows(emulator: Emulator): ServedWindow[] {
  const days = Array.from({ length: daysBetween(START, LAST) + 1 }, (_, i) => addDays(START, i));
  return days.map((day) => ({
    day,
    accounts: [...emulator.truth.accounts(day, day)].map(({ custom_fields, ...row }) => ({
      row,
      fields: custom_fields,
    })),
  }));
}

describe.each(testDestinations)('accounts history from the emulator into $name', (target) => {
  let now = Date.parse(`${END}T20:00:00Z`);
  let modified: string;
  let truth: Version[];
  const emulator = useEmulator({
    seed: 23,
    accounts: 60,
    startDate: START,
    endDate: END,
    timezone: TZ,
    port: 0,
    clock: () => now,
  });
  beforeAll(async () => {
    const customer = [...emulator.truth.customers(END)].find((c) => c.phone !== null)!;
    modified = customer.customer_id;
    for (const [i, night] of NIGHTS.entries()) {
      now = Date.parse(`${night}T09:00:00Z`); // noon in Athens
      const body = { phone: customer.phone, city: CITIES[i], businessFields: { tier: i === 2 ? 'Gold' : 'Silver' } };
      const response = await fetch(`${emulator.url}/accounts/update?phone=${encodeURIComponent(customer.phone!)}`, {
        method: 'PUT',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      expect(response.status).toBe(200);
    }
    truth = inOrderHistory(servedWindows(emulator));
  });

  const jobs = (
    config: Parameters<typeof emulatorJobs>[0]['destination'],
    extra: Partial<Parameters<typeof emulatorJobs>[0]> = {},
  ) => emulatorJobs({ url: emulator.url, timezone: TZ, firstDay: START, destination: config, ...extra });

  it(
    'nightly runs: three modified nights are three versions with their boundaries; a middle night again changes nothing',
    { timeout: 180_000 },
    async () => {
      const { config } = await target.fresh();
      const file = jobs(config);
      for (const night of NIGHTS) {
        const result = await runCli(['run', '--config', file, '--until', night]);
        expect(result.code, result.stderr.slice(-500)).toBe(0);
      }
      const history = await withWarehouse(config, readHistory);
      expect(history).toEqual(truth);
      expect(history.filter((v) => v.customer_id === modified).slice(-3)).toEqual([
        expect.objectContaining({ city: CITIES[0], valid_from: NIGHTS[0], valid_to: NIGHTS[1], is_current: false }),
        expect.objectContaining({ city: CITIES[1], valid_from: NIGHTS[1], valid_to: NIGHTS[2], is_current: false }),
        expect.objectContaining({
          city: CITIES[2],
          valid_from: NIGHTS[2],
          valid_to: null,
          is_current: true,
          custom_fields: expect.objectContaining({ tier: 'Gold' }),
        }),
      ]);

      const again = await runCli(['backfill', '--config', file, '--from', NIGHTS[1]!, '--to', NIGHTS[1]!]);
      expect(again.code, again.stderr.slice(-500)).toBe(0);
      expect(await withWarehouse(config, readHistory)).toEqual(truth);

      const status = await runCli(['status', '--config', file, '--json']);
      expect(status.code).toBe(0);
      const customers = new Set(truth.map((v) => v.customer_id)).size;
      expect(JSON.parse(status.stdout).history).toEqual([
        {
          stream: 'accounts',
          table: 'accounts_history',
          kept: true,
          versions: truth.length,
          current: customers,
          observations: expect.any(Number),
        },
      ]);
    },
  );

  it('the same nights loaded newest first give the same history', { timeout: 180_000 }, async () => {
    const { config } = await target.fresh();
    // a program that starts on the last night has no directory to sweep first: each backfill loads its own day only
    const file = jobs(config, { historyStart: LAST });
    // the copy for analysts published by the last backfill only: on DuckDB a publish is about half of a one-day
    // backfill, and what is under test is the warehouse's history
    const quiet = jobs(unpublished(config), { historyStart: LAST });
    for (let day = LAST; day >= START; day = addDays(day, -1))
      await backfillCommand({ config: day === START ? file : quiet, from: day, to: day });
    await withWarehouse(config, async (conn) => {
      const order = await conn.all<{ w: string }>(
        `SELECT CAST(window_start AS VARCHAR) AS w FROM _etl_windows WHERE stream = 'accounts' ORDER BY finished_at`,
      );
      expect(order.map((o) => o.w)).toEqual(
        servedWindows(emulator)
          .map((w) => w.day)
          .reverse(),
      );
      expect(await readHistory(conn)).toEqual(truth);
    });
  });

  it('two workers loading the windows at once give the same history', { timeout: 180_000 }, async () => {
    const { config } = await target.fresh();
    const file = jobs(config, { historyStart: LAST });
    const args = ['backfill', '--config', file, '--from', START, '--to', LAST, '--concurrency', '4'];
    // a DuckDB file belongs to one process: there the workers are the lanes of one backfill
    const workers = target.name === 'postgres' ? [startCli(args), startCli(args)] : [startCli(args)];
    for (const r of await Promise.all(workers.map((w) => w.done))) expect(r.code, r.stderr.slice(-500)).toBe(0);
    expect(await withWarehouse(config, readHistory)).toEqual(truth);
  });

  it(
    "the README's survey example gives each answer the city and loyaltyTier its customer had that day",
    { timeout: 180_000 },
    async () => {
      const { config } = await target.fresh();
      const file = jobs(config, { streams: ['accounts', 'surveys'] });
      const result = await runCli(['run', '--config', file, '--until', LAST]);
      expect(result.code, result.stderr.slice(-500)).toBe(0);
      const example = /```sql\n(SELECT r\.response_id[\s\S]*?)```/.exec(readFileSync('README.md', 'utf8'))![1]!;
      const joined = await withWarehouse(config, (conn) =>
        conn.all<{ customer_id: string; at: number | string; city: string | null; loyalty_tier: string | null }>(
          `SELECT customer_id, EXTRACT(EPOCH FROM answered_at) AS at, city, loyalty_tier FROM (${example}) x`,
        ),
      );
      const expected = [...emulator.truth.surveyResponses(START, LAST)].map((answer) => {
        const day = DateTime.fromISO(answer.answered_at).setZone(TZ).toISODate()!;
        const version = truth.find(
          (v) =>
            v.customer_id === answer.customer_id && v.valid_from <= day && (v.valid_to === null || day < v.valid_to),
        )!;
        return [
          answer.customer_id,
          Date.parse(answer.answered_at) / 1000,
          version.city,
          version.custom_fields.loyaltyTier ?? null,
        ];
      });
      const sorted = (rows: unknown[][]) => rows.map((r) => JSON.stringify(r)).sort();
      expect(expected.length).toBeGreaterThan(20);
      // some answers were given while an earlier version held: the latest accounts row would have misled
      expect(
        expected.some(([id, , city]) => truth.some((v) => v.customer_id === id && v.is_current && v.city !== city)),
      ).toBe(true);
      expect(sorted(joined.map((r) => [r.customer_id, Number(r.at), r.city, r.loyalty_tier]))).toEqual(
        sorted(expected),
      );
    },
  );

  it('with the history turned off, accounts load and no version is kept', { timeout: 180_000 }, async () => {
    const { config } = await target.fresh();
    const file = jobs(config, { postings: '    history:\n      accounts: false\n' });
    const result = await runCli(['run', '--config', file, '--until', LAST]);
    expect(result.code, result.stderr.slice(-500)).toBe(0);
    await withWarehouse(config, async (conn) => {
      expect(await readHistory(conn)).toEqual([]);
      const [accounts] = await conn.all<{ n: number | string }>('SELECT COUNT(*) AS n FROM accounts');
      expect(Number(accounts!.n)).toBe(new Set(truth.map((v) => v.customer_id)).size);
    });
  });
});
