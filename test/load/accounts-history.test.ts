import fc from 'fast-check';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Destination } from '../../src/load/destination.js';
import { openDestination } from '../../src/load/warehouses.js';
import {
  inOrderHistory,
  loadAccountWindows,
  readHistory,
  type Served,
  type ServedWindow,
} from '../helpers/account-history.js';
import { normalizeAccount } from '../../src/streams/accounts.js';
import { account } from '../helpers/account-spans.js';
import { testDestinations, type TestDestination } from '../helpers/destinations.js';

function served(id: string, city: string | null, fields: Record<string, string | null> = {}): Served {
  return { row: account(id, city), fields };
}

/** C1 changes on the 1st, 3rd and 5th; the 4th serves it again unchanged; C2 appears once. */
const NIGHTS: ServedWindow[] = [
  { day: '2024-03-01', accounts: [served('C1', 'Athens', { tier: 'Silver' })] },
  { day: '2024-03-02', accounts: [served('C2', 'Patras')] },
  { day: '2024-03-03', accounts: [served('C1', 'Larissa', { tier: 'Silver' })] },
  { day: '2024-03-04', accounts: [served('C1', 'Larissa', { tier: 'Silver' })] },
  { day: '2024-03-05', accounts: [served('C1', 'Larissa', { tier: 'Gold', "it's": 'x' })] },
];

const C1_VERSIONS = [
  {
    city: 'Athens',
    custom_fields: { tier: 'Silver' },
    valid_from: '2024-03-01',
    valid_to: '2024-03-03',
    is_current: false,
  },
  {
    city: 'Larissa',
    custom_fields: { tier: 'Silver' },
    valid_from: '2024-03-03',
    valid_to: '2024-03-05',
    is_current: false,
  },
  {
    city: 'Larissa',
    custom_fields: { tier: 'Gold', "it's": 'x' },
    valid_from: '2024-03-05',
    valid_to: null,
    is_current: true,
  },
];

async function historyOf(destination: Destination) {
  return destination.withConnection(readHistory);
}

describe.each(testDestinations)('accounts history into $name', (target) => {
  let destination: Destination;
  beforeEach(async () => {
    destination = await openDestination((await target.fresh()).config);
  });
  afterEach(async () => destination.close());

  it('a customer changed on three nights has three versions, half-open, the last one current', async () => {
    for (const night of NIGHTS) await loadAccountWindows(destination, [night]);
    const history = await historyOf(destination);
    expect(history.filter((v) => v.customer_id === 'C1').map(({ customer_id: _, email: __, ...v }) => v)).toEqual(
      C1_VERSIONS,
    );
    expect(history).toEqual(inOrderHistory(NIGHTS));
  });

  it('the same nights in reverse order, as one span, and a middle night again give the same history', async () => {
    for (const night of [...NIGHTS].reverse()) await loadAccountWindows(destination, [night]);
    expect(await historyOf(destination)).toEqual(inOrderHistory(NIGHTS));
    await loadAccountWindows(destination, [NIGHTS[2]!], 'run-again');
    expect(await historyOf(destination)).toEqual(inOrderHistory(NIGHTS));

    const other = await openDestination((await target.fresh()).config);
    try {
      await loadAccountWindows(other, NIGHTS);
      expect(await historyOf(other)).toEqual(inOrderHistory(NIGHTS));
    } finally {
      await other.close();
    }
  });

  it('a window loaded again without a customer drops the version it started', async () => {
    for (const night of NIGHTS) await loadAccountWindows(destination, [night]);
    const corrected = { day: '2024-03-03', accounts: [] };
    await loadAccountWindows(destination, [corrected]);
    const truth = inOrderHistory(NIGHTS.map((n) => (n.day === corrected.day ? corrected : n)));
    expect(await historyOf(destination)).toEqual(truth);
    expect(truth.filter((v) => v.customer_id === 'C1').map((v) => v.valid_from)).toEqual([
      '2024-03-01',
      '2024-03-04',
      '2024-03-05',
    ]);
  });

  it('the as-of function gives each customer its version on a day, none before its first', async () => {
    for (const night of NIGHTS) await loadAccountWindows(destination, [night]);
    const asOf = (day: string) =>
      destination.withConnection((conn) =>
        conn.all<{ customer_id: string; city: string }>(
          `SELECT customer_id, city FROM accounts_as_of(CAST($1 AS DATE)) ORDER BY customer_id`,
          [day],
        ),
      );
    expect(await asOf('2024-02-29')).toEqual([]);
    expect(await asOf('2024-03-01')).toEqual([{ customer_id: 'C1', city: 'Athens' }]);
    expect(await asOf('2024-03-02')).toEqual([
      { customer_id: 'C1', city: 'Athens' },
      { customer_id: 'C2', city: 'Patras' },
    ]);
    expect(await asOf('2024-03-03')).toEqual([
      { customer_id: 'C1', city: 'Larissa' },
      { customer_id: 'C2', city: 'Patras' },
    ]);
    const tier = await destination.withConnection((conn) =>
      conn.all<{ tier: string }>(
        `SELECT custom_fields->>'tier' AS tier FROM accounts_as_of(CAST('2099-01-01' AS DATE)) WHERE customer_id = 'C1'`,
      ),
    );
    expect(tier).toEqual([{ tier: 'Gold' }]);
  });

  it('history grows with changes, not nights: a night that serves the same content adds no version', async () => {
    const same = ['2024-03-01', '2024-03-02', '2024-03-03'].map((day) => ({ day, accounts: [served('C1', 'Athens')] }));
    for (const night of same) await loadAccountWindows(destination, [night]);
    const history = await historyOf(destination);
    expect(history.map((v) => [v.valid_from, v.valid_to])).toEqual([['2024-03-01', null]]);
  });
});

/** Days of the property test, and what each may serve. */
const DAYS = ['2024-05-01', '2024-05-02', '2024-05-03', '2024-05-04', '2024-05-05', '2024-05-06'];
const CUSTOMERS = ['C1', 'C2', 'C3'];

const windowsArb: fc.Arbitrary<ServedWindow[]> = fc.tuple(
  ...DAYS.map((day) =>
    fc
      .subarray(CUSTOMERS)
      .chain((ids) =>
        fc.tuple(
          ...ids.map((id) =>
            fc
              .record({
                city: fc.constantFrom('Athens', 'Patras', null),
                tier: fc.constantFrom('Silver', 'Gold', undefined),
              })
              .map(({ city, tier }) => served(id, city, tier === undefined ? {} : { tier })),
          ),
        ),
      )
      .map((accounts) => ({ day, accounts })),
  ),
);

/**
 * Loads: the days cut into spans of consecutive windows, in a random order, some spans twice, spread over two
 * workers loading at the same time (on PostgreSQL two destinations, as two processes would).
 */
const planArb = fc.record({
  cuts: fc.subarray([1, 2, 3, 4, 5]),
  order: fc.func(fc.integer()),
  again: fc.subarray([0, 1, 2, 3, 4, 5]),
});

async function checkOrderIndependence(target: TestDestination): Promise<void> {
  await fc.assert(
    fc.asyncProperty(windowsArb, planArb, async (windows, plan) => {
      const bounds = [0, ...[...plan.cuts].sort(), DAYS.length];
      const spans = bounds.slice(1).map((end, i) => windows.slice(bounds[i], end));
      const loads = [...spans, ...plan.again.filter((i) => i < spans.length).map((i) => spans[i]!)];
      loads.sort((a, b) => plan.order(a[0]!.day) - plan.order(b[0]!.day));
      const { config } = await target.fresh();
      const first = await openDestination(config);
      const second = target.name === 'postgres' ? await openDestination(config) : first;
      try {
        const lanes = [first, second].map(async (destination, lane) => {
          for (let i = lane; i < loads.length; i += 2)
            await loadAccountWindows(destination, loads[i]!, `run-${lane}-${i}`);
        });
        await Promise.all(lanes);
        expect(await historyOf(first)).toEqual(inOrderHistory(windows));
      } finally {
        await first.close();
        if (second !== first) await second.close();
      }
    }),
    { numRuns: 20 },
  );
}

describe.each(testDestinations)('accounts history, any order of windows, into $name', (target) => {
  it('equals the history of loading every window once in time order', { timeout: 180_000 }, async () => {
    await checkOrderIndependence(target);
  });
});

describe.each(testDestinations)('a warehouse that held accounts before the history, into $name', (target) => {
  it('starts each history with the current row from the window that served it; a backfill fills in the versions before', async () => {
    const { config } = await target.fresh();
    const before = await openDestination(config);
    try {
      for (const night of NIGHTS) await loadAccountWindows(before, [night]);
      // as a warehouse of the release before the history: its tables, and no record of the history's migrations
      await before.withConnection(async (conn) => {
        const migration = '008_accounts_history';
        await conn.run('DELETE FROM _etl_migrations WHERE version = $1', ['010_accounts_set_on']);
        await conn.run(
          target.name === 'duckdb' ? 'DROP MACRO TABLE accounts_as_of' : 'DROP FUNCTION accounts_as_of(date)',
        );
        await conn.run('DROP TABLE accounts_history');
        await conn.run('DROP TABLE _etl_accounts_observations');
        await conn.run('DELETE FROM _etl_migrations WHERE version = $1', [migration]);
      });
    } finally {
      await before.close();
    }
    const upgraded = await openDestination(config);
    try {
      const current = (id: string, from: string) => ({
        ...inOrderHistory(NIGHTS).find((v) => v.customer_id === id && v.valid_from === from)!,
      });
      expect(await historyOf(upgraded)).toEqual([current('C1', '2024-03-05'), current('C2', '2024-03-02')]);
      // the same content served again the next night is no change: the migration's hash is the loader's
      const again = { day: '2024-03-06', accounts: NIGHTS[4]!.accounts };
      await loadAccountWindows(upgraded, [again]);
      expect(await historyOf(upgraded)).toEqual([current('C1', '2024-03-05'), current('C2', '2024-03-02')]);
      await loadAccountWindows(upgraded, NIGHTS.slice(0, 4));
      expect(await historyOf(upgraded)).toEqual(inOrderHistory([...NIGHTS, again]));
    } finally {
      await upgraded.close();
    }
  });
});

describe.each(testDestinations)('an export that serves the current profile for a past window, into $name', (target) => {
  /** What normalizing the export's record gives: `profileSet` at `setAt` (Athens wall time), in `city`. */
  function current(id: string, city: string, setAt: string): Served {
    const rows = normalizeAccount({ customerId: id, city, profileSet: setAt, customFieldMap: {} }, 'Europe/Athens');
    return { row: rows.accounts![0]!, fields: {} };
  }

  it('never starts a version before the day its profileSet names; of the versions set on one day the last loaded holds', async () => {
    const destination = await openDestination((await target.fresh()).config);
    try {
      await loadAccountWindows(destination, [
        { day: '2024-03-01', accounts: [current('C1', 'Athens', '2024-03-01 10:00:00')] },
      ]);
      // a backfill of the 2nd, made on the 6th: the export serves C1 as it is now, set on the 5th
      await loadAccountWindows(destination, [
        { day: '2024-03-02', accounts: [current('C1', 'Patras', '2024-03-05 12:00:00')] },
        { day: '2024-03-03', accounts: [] },
      ]);
      const versions = (await historyOf(destination)).map((v) => [v.city, v.valid_from, v.valid_to]);
      expect(versions).toEqual([
        ['Athens', '2024-03-01', '2024-03-05'],
        ['Patras', '2024-03-05', null],
      ]);
      // the 5th itself, loaded later with another content set that day: one version starts on the 5th, the last loaded
      await loadAccountWindows(destination, [
        { day: '2024-03-05', accounts: [current('C1', 'Volos', '2024-03-05 18:00:00')] },
      ]);
      expect((await historyOf(destination)).map((v) => [v.city, v.valid_from, v.valid_to])).toEqual([
        ['Athens', '2024-03-01', '2024-03-05'],
        ['Volos', '2024-03-05', null],
      ]);
    } finally {
      await destination.close();
    }
  });

  it('keeps the last change of a window listed once per change, whatever order the changes were listed in', async () => {
    const destination = await openDestination((await target.fresh()).config);
    try {
      // the evening's change listed before the morning's, as a listing whose order is not stable may serve them
      await loadAccountWindows(destination, [
        {
          day: '2024-03-02',
          accounts: [current('C1', 'Volos', '2024-03-02 19:00:00'), current('C1', 'Patras', '2024-03-02 08:00:00')],
        },
      ]);
      await destination.withConnection(async (conn) => {
        expect(await conn.all(`SELECT city FROM accounts`)).toEqual([{ city: 'Volos' }]);
      });
      expect((await historyOf(destination)).map((v) => [v.city, v.valid_from, v.valid_to])).toEqual([
        ['Volos', '2024-03-02', null],
      ]);
    } finally {
      await destination.close();
    }
  });
});
