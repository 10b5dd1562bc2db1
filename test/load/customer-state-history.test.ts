import fc from 'fast-check';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Destination } from '../../src/load/destination.js';
import { openDestination } from '../../src/load/warehouses.js';
import type { Row } from '../../src/load/table-spec.js';
import { commitWindows } from '../../src/pipeline/load-span.js';
import { loyaltyStatusStream } from '../../src/streams/loyalty-status.js';
import { testDestinations } from '../helpers/destinations.js';

/** One ask of a customer's loyalty: its wallets (`GR/EUR` → points) and tier, or `null` for a `1005` answer. */
interface Ask {
  customer: string;
  at: string;
  state: { tier: string; wallets: Record<string, string> } | null;
}

interface WalletVersion {
  customer_id: string;
  wallet: string;
  points: number;
  valid_from: string;
  valid_to: string | null;
  is_current: boolean;
}

const STATUS_NULLS = [
  'program_name',
  'program_logo',
  'tier_order',
  'tier_logo',
  'tier_expires_at',
  'tier_benefits',
  'points_expiring',
  'points_expiring_on',
  'to_next_tier',
  'cumulative_credit',
];

/** The rows the loyalty status stream stages for the asks, per table. */
function staged(asks: readonly Ask[]): Map<string, Row[]> {
  const out = new Map<string, Row[]>([
    ['loyalty_status', []],
    ['loyalty_wallets', []],
    ['loyalty_balance_details', []],
    ['_etl_customer_observations', []],
  ]);
  for (const ask of asks) {
    out.get('_etl_customer_observations')!.push({
      stream: 'loyalty_status',
      customer_id: ask.customer,
      observed_at: ask.at,
      outcome: ask.state ? 'answered' : 'not_found',
    });
    if (!ask.state) continue;
    const status: Row = { customer_id: ask.customer, tier_name: ask.state.tier, observed_at: ask.at };
    for (const c of STATUS_NULLS) status[c] = null;
    out.get('loyalty_status')!.push(status);
    for (const [wallet, points] of Object.entries(ask.state.wallets)) {
      const [iso, currency] = wallet.split('/');
      out.get('loyalty_wallets')!.push({
        customer_id: ask.customer,
        country_iso: iso!,
        country_name: null,
        currency: currency!,
        points,
        value: null,
        redeemable_points: null,
        redeemable_value: null,
      });
    }
  }
  return out;
}

/** Loads the asks as one night of the stream (one span of one window, the night of the first ask). */
async function loadNight(
  destination: Destination,
  asks: readonly Ask[],
  runId = `run-${asks.map((a) => a.at).join()}`,
): Promise<void> {
  const day = asks[0]!.at.slice(0, 10);
  const window = { start: day, end: day };
  const load = await destination.openSpan({
    job: 'j',
    stream: 'loyalty_status',
    runId,
    windows: [window],
    tables: loyaltyStatusStream.tables,
  });
  for (const [table, rows] of staged(asks)) {
    await load.append(
      table,
      rows.map((row, i) => ({ seq: i + 1, windowStart: day, row })),
    );
  }
  await commitWindows(
    load,
    { job: 'j', stream: 'loyalty_status', runId, firstDay: '2024-01-01' },
    [window],
    new Map([[day, asks.length]]),
    1,
  );
}

async function walletHistory(destination: Destination): Promise<WalletVersion[]> {
  const rows = await destination.withConnection((conn) =>
    conn.all<{
      customer_id: string;
      wallet: string;
      points: string;
      from_s: number | string;
      to_s: number | string | null;
      is_current: boolean;
    }>(
      `SELECT customer_id, country_iso || '/' || currency AS wallet, CAST(points AS VARCHAR) AS points, EXTRACT(EPOCH FROM valid_from) AS from_s,
              EXTRACT(EPOCH FROM valid_to) AS to_s, is_current FROM loyalty_wallets_history ORDER BY customer_id, wallet, valid_from`,
    ),
  );
  const iso = (s: number | string) => new Date(Number(s) * 1000).toISOString();
  return rows.map((r) => ({
    customer_id: r.customer_id,
    wallet: r.wallet,
    points: Number(r.points),
    valid_from: iso(r.from_s),
    valid_to: r.to_s === null ? null : iso(r.to_s),
    is_current: r.is_current,
  }));
}

/** The wallet versions loading every ask once, in time order, gives: each wallet followed along its customer's asks. */
function inOrderWallets(asks: readonly Ask[]): WalletVersion[] {
  const out: WalletVersion[] = [];
  const customers = [...new Set(asks.map((a) => a.customer))].sort();
  for (const customer of customers) {
    const mine = asks.filter((a) => a.customer === customer).sort((a, b) => a.at.localeCompare(b.at));
    const wallets = [...new Set(mine.flatMap((a) => Object.keys(a.state?.wallets ?? {})))].sort();
    for (const wallet of wallets) {
      let open: WalletVersion | undefined;
      for (const ask of mine) {
        const points = ask.state?.wallets[wallet];
        if (open && (points === undefined || Number(points) !== open.points)) {
          open.valid_to = ask.at;
          open.is_current = false;
          open = undefined;
        }
        if (points !== undefined && !open) {
          open = {
            customer_id: customer,
            wallet,
            points: Number(points),
            valid_from: ask.at,
            valid_to: null,
            is_current: true,
          };
          out.push(open);
        }
      }
    }
  }
  return out;
}

const at = (day: string) => `2024-05-${day}T08:00:00.000Z`;

/** C1 loses its AE wallet on the 3rd and gets it back on the 5th; C2 answers 1005 on the 4th; C3 never changes. */
const ASKS: Ask[] = [
  { customer: 'C1', at: at('01'), state: { tier: 'Silver', wallets: { 'GR/EUR': '10', 'AE/AED': '5' } } },
  { customer: 'C2', at: at('01'), state: { tier: 'Gold', wallets: { 'GR/EUR': '70' } } },
  { customer: 'C3', at: at('01'), state: { tier: 'Silver', wallets: { 'CY/EUR': '1' } } },
  { customer: 'C1', at: at('02'), state: { tier: 'Silver', wallets: { 'GR/EUR': '10', 'AE/AED': '5' } } },
  { customer: 'C1', at: at('03'), state: { tier: 'Silver', wallets: { 'GR/EUR': '12' } } },
  { customer: 'C3', at: at('03'), state: { tier: 'Silver', wallets: { 'CY/EUR': '1' } } },
  { customer: 'C2', at: at('04'), state: null },
  { customer: 'C1', at: at('05'), state: { tier: 'Gold', wallets: { 'GR/EUR': '12', 'AE/AED': '5' } } },
];

/** The asks grouped by night, as the stream loads them. */
function nights(asks: readonly Ask[]): Ask[][] {
  const byDay = new Map<string, Ask[]>();
  for (const ask of asks) byDay.set(ask.at.slice(0, 10), [...(byDay.get(ask.at.slice(0, 10)) ?? []), ask]);
  return [...byDay.values()];
}

describe.each(testDestinations)('history of the loyalty state per customer, into $name', (target) => {
  let destination: Destination;
  beforeEach(async () => {
    destination = await openDestination((await target.fresh()).config);
  });
  afterEach(async () => destination.close());

  it('a wallet gone ends its version at the ask that missed it, and opens a new one when it is back; a 1005 ends them all', async () => {
    for (const night of nights(ASKS)) await loadNight(destination, night);
    const history = await walletHistory(destination);
    expect(history.filter((v) => v.customer_id === 'C1')).toEqual([
      { customer_id: 'C1', wallet: 'AE/AED', points: 5, valid_from: at('01'), valid_to: at('03'), is_current: false },
      { customer_id: 'C1', wallet: 'AE/AED', points: 5, valid_from: at('05'), valid_to: null, is_current: true },
      { customer_id: 'C1', wallet: 'GR/EUR', points: 10, valid_from: at('01'), valid_to: at('03'), is_current: false },
      { customer_id: 'C1', wallet: 'GR/EUR', points: 12, valid_from: at('03'), valid_to: null, is_current: true },
    ]);
    expect(history.filter((v) => v.customer_id !== 'C1')).toEqual([
      { customer_id: 'C2', wallet: 'GR/EUR', points: 70, valid_from: at('01'), valid_to: at('04'), is_current: false },
      { customer_id: 'C3', wallet: 'CY/EUR', points: 1, valid_from: at('01'), valid_to: null, is_current: true },
    ]);
    const status = await destination.withConnection((conn) =>
      conn.all<{ customer_id: string; tier_name: string; is_current: boolean }>(
        `SELECT customer_id, tier_name, is_current FROM loyalty_status_history ORDER BY customer_id, valid_from`,
      ),
    );
    expect(status).toEqual([
      { customer_id: 'C1', tier_name: 'Silver', is_current: false },
      { customer_id: 'C1', tier_name: 'Gold', is_current: true },
      { customer_id: 'C2', tier_name: 'Gold', is_current: false },
      { customer_id: 'C3', tier_name: 'Silver', is_current: true },
    ]);
  });

  it('the nights in reverse order give the same versions, and a night loaded again changes nothing', async () => {
    for (const night of nights(ASKS).reverse()) await loadNight(destination, night);
    expect(await walletHistory(destination)).toEqual(inOrderWallets(ASKS));
    const before = await destination.withConnection((conn) =>
      conn.all(`SELECT COUNT(*) AS n FROM _etl_loyalty_wallets_observations`),
    );
    await loadNight(destination, nights(ASKS)[2]!, 'run-again');
    expect(await walletHistory(destination)).toEqual(inOrderWallets(ASKS));
    expect(
      await destination.withConnection((conn) =>
        conn.all(`SELECT COUNT(*) AS n FROM _etl_loyalty_wallets_observations`),
      ),
    ).toEqual(before);
  });

  it('asks loaded in any order give the versions of loading them in time order', async () => {
    const customer = fc.constantFrom('C1', 'C2');
    const state = fc.option(
      fc.record({
        tier: fc.constantFrom('Silver', 'Gold'),
        wallets: fc.dictionary(fc.constantFrom('GR/EUR', 'AE/AED', 'CY/EUR'), fc.constantFrom('1', '2')),
      }),
      { freq: 4 },
    );
    const asks = fc.uniqueArray(fc.record({ customer, day: fc.integer({ min: 1, max: 9 }), state }), {
      minLength: 1,
      maxLength: 7,
      selector: (a) => `${a.customer}${a.day}`,
    });
    await fc.assert(
      fc.asyncProperty(
        asks.chain((list) =>
          fc.tuple(fc.constant(list), fc.shuffledSubarray(list, { minLength: list.length, maxLength: list.length })),
        ),
        async ([list, order]) => {
          const fresh = await openDestination((await target.fresh()).config);
          try {
            const toAsk = (a: (typeof list)[number]): Ask => ({
              customer: a.customer,
              at: at(`0${a.day}`),
              state: a.state,
            });
            for (const a of order) await loadNight(fresh, [toAsk(a)]);
            expect(await walletHistory(fresh)).toEqual(inOrderWallets(list.map(toAsk)));
          } finally {
            await fresh.close();
          }
        },
      ),
      { numRuns: 4 },
    );
  }, 120_000);
});

describe.each(testDestinations)('a warehouse that held the loyalty state before its history, into $name', (target) => {
  it('starts each history with the current rows as of the last ask; the same state asked again is no change', async () => {
    const { config } = await target.fresh();
    const before = await openDestination(config);
    try {
      for (const night of nights(ASKS)) await loadNight(before, night);
      // as a warehouse of the release before the history: its tables, and no record of the history's migration
      await before.withConnection(async (conn) => {
        await conn.run(
          target.name === 'duckdb'
            ? 'DROP MACRO TABLE loyalty_status_as_of'
            : 'DROP FUNCTION loyalty_status_as_of(timestamptz)',
        );
        for (const table of ['loyalty_status', 'loyalty_wallets', 'loyalty_balance_details', 'vouchers']) {
          await conn.run(`DROP TABLE ${table}_history`);
          await conn.run(`DROP TABLE _etl_${table}_observations`);
        }
        await conn.run('DROP TABLE _etl_loyalty_status_asked');
        await conn.run('DROP TABLE _etl_vouchers_asked');
        await conn.run('DELETE FROM _etl_migrations WHERE version IN ($1, $2)', [
          '009_loyalty_state_history',
          '014_observation_runs',
        ]);
      });
    } finally {
      await before.close();
    }
    const upgraded = await openDestination(config);
    try {
      const current = inOrderWallets(ASKS)
        .filter((v) => v.is_current)
        .map((v) => ({ ...v, valid_from: ASKS.filter((a) => a.customer === v.customer_id).at(-1)!.at }));
      expect(await walletHistory(upgraded)).toEqual(current);
      const again = ASKS.filter((a) => a.customer === 'C1').at(-1)!;
      await loadNight(upgraded, [{ ...again, at: at('06') }]);
      expect(await walletHistory(upgraded)).toEqual(current);
    } finally {
      await upgraded.close();
    }
  });
});

/** The runs of a customer's wallets the observations should hold: one per wallet version (a run ends where its version does). */
async function rowCounts(destination: Destination): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (const table of [
    '_etl_loyalty_wallets_observations',
    'loyalty_wallets_history',
    '_etl_loyalty_status_observations',
    'loyalty_status_history',
    '_etl_loyalty_status_asked',
  ]) {
    const [row] = await destination.withConnection((conn) =>
      conn.all<{ n: number | string }>(`SELECT COUNT(*) AS n FROM ${table}`),
    );
    counts[table] = Number(row!.n);
  }
  return counts;
}

/** The tier versions loading every ask once, in time order, gives: a 1005 ends the customer's version. */
function inOrderTiers(
  asks: readonly Ask[],
): Array<{ customer_id: string; tier_name: string; from: string; to: string | null }> {
  const out: Array<{ customer_id: string; tier_name: string; from: string; to: string | null }> = [];
  for (const customer of [...new Set(asks.map((a) => a.customer))].sort()) {
    let open: (typeof out)[number] | undefined;
    for (const ask of asks.filter((a) => a.customer === customer).sort((a, b) => a.at.localeCompare(b.at))) {
      if (open && ask.state?.tier !== open.tier_name) {
        open.to = ask.at;
        open = undefined;
      }
      if (ask.state && !open) {
        open = { customer_id: customer, tier_name: ask.state.tier, from: ask.at, to: null };
        out.push(open);
      }
    }
  }
  return out;
}

async function tierHistory(destination: Destination): Promise<ReturnType<typeof inOrderTiers>> {
  const rows = await destination.withConnection((conn) =>
    conn.all<{ customer_id: string; tier_name: string; from_s: number | string; to_s: number | string | null }>(
      `SELECT customer_id, tier_name, EXTRACT(EPOCH FROM valid_from) AS from_s, EXTRACT(EPOCH FROM valid_to) AS to_s
         FROM loyalty_status_history ORDER BY customer_id, valid_from`,
    ),
  );
  const iso = (s: number | string) => new Date(Number(s) * 1000).toISOString();
  return rows.map((r) => ({
    customer_id: r.customer_id,
    tier_name: r.tier_name,
    from: iso(r.from_s),
    to: r.to_s === null ? null : iso(r.to_s),
  }));
}

const dayAt = (day: number) => `2024-05-${String(day).padStart(2, '0')}T08:00:00.000Z`;

describe.each(testDestinations)('the observations of the loyalty state kept as runs, into $name', (target) => {
  let destination: Destination;
  beforeEach(async () => {
    destination = await openDestination((await target.fresh()).config);
  });
  afterEach(async () => destination.close());

  it('quiet nights add asks, not observations; an ask arriving late inside a run splits it, and one found the same merges it back', async () => {
    const quiet = { tier: 'Silver', wallets: { 'GR/EUR': '10', 'AE/AED': '5' } };
    for (const day of [1, 2, 3, 5, 6, 7, 8, 9, 10, 11])
      await loadNight(destination, [{ customer: 'C1', at: dayAt(day), state: quiet }]);
    expect(await rowCounts(destination)).toEqual({
      _etl_loyalty_wallets_observations: 2,
      loyalty_wallets_history: 2,
      _etl_loyalty_status_observations: 1,
      loyalty_status_history: 1,
      _etl_loyalty_status_asked: 10,
    });
    // a backfill of the 4th finds another balance and no AE wallet: it ends and restarts versions at the asks around it
    const late: Ask = { customer: 'C1', at: dayAt(4), state: { tier: 'Silver', wallets: { 'GR/EUR': '11' } } };
    const asks = [1, 2, 3, 5, 6, 7, 8, 9, 10, 11].map((day): Ask => ({ customer: 'C1', at: dayAt(day), state: quiet }));
    await loadNight(destination, [late], 'run-late');
    expect(await walletHistory(destination)).toEqual(inOrderWallets([...asks, late]));
    expect(await rowCounts(destination)).toMatchObject({
      _etl_loyalty_wallets_observations: 5,
      loyalty_wallets_history: 5,
      _etl_loyalty_status_observations: 1,
      _etl_loyalty_status_asked: 11,
    });
    // the same ask replayed, now answering as the nights around it did: one run per wallet again
    await loadNight(destination, [{ ...late, state: quiet }], 'run-replay');
    expect(await walletHistory(destination)).toEqual(inOrderWallets([...asks, { ...late, state: quiet }]));
    expect(await rowCounts(destination)).toMatchObject({
      _etl_loyalty_wallets_observations: 2,
      loyalty_wallets_history: 2,
      _etl_loyalty_status_asked: 11,
    });
  });

  it('asks loaded in any order, in any spans and again, give the versions of loading them once in time order, with one observation per version', async () => {
    const state: fc.Arbitrary<NonNullable<Ask['state']>> = fc.record({
      tier: fc.constantFrom('Silver', 'Gold'),
      wallets: fc.dictionary(fc.constantFrom('GR/EUR', 'AE/AED'), fc.constantFrom('1', '2')),
    });
    // five in seven nights answer as the night before
    const change: fc.Arbitrary<'same' | Ask['state']> = fc
      .tuple(fc.integer({ min: 0, max: 6 }), fc.option(state))
      .map(([n, other]) => (n < 5 ? 'same' : other));
    // a customer's nights: mostly the same answer as the night before, sometimes another, sometimes a 1005
    const nightsOf = (customer: string) =>
      fc
        .tuple(
          fc.uniqueArray(fc.integer({ min: 1, max: 28 }), { minLength: 1, maxLength: 10 }),
          state,
          fc.array(change, { minLength: 10, maxLength: 10 }),
        )
        .map(([days, first, changes]) => {
          let current: Ask['state'] = first;
          return [...days]
            .sort((a, b) => a - b)
            .map((day, i): Ask => {
              const change = changes[i]!;
              if (i > 0 && change !== 'same') current = change;
              return { customer, at: dayAt(day), state: current };
            });
        });
    const plan = fc
      .tuple(nightsOf('C1'), nightsOf('C2'))
      .map(([a, b]) => [...a, ...b])
      .chain((asks) =>
        fc.record({
          asks: fc.constant(asks),
          order: fc.shuffledSubarray(asks, { minLength: asks.length, maxLength: asks.length }),
          again: fc.subarray(asks),
          spanOfTwo: fc.boolean(),
        }),
      );
    await fc.assert(
      fc.asyncProperty(plan, async ({ asks, order, again, spanOfTwo }) => {
        const fresh = await openDestination((await target.fresh()).config);
        try {
          // spans of one ask, or of two asks of different customers where the order allows
          const spans: Ask[][] = [];
          for (const ask of [...order, ...again]) {
            const last = spans.at(-1);
            if (spanOfTwo && last?.length === 1 && last[0]!.customer !== ask.customer) last.push(ask);
            else spans.push([ask]);
          }
          for (const [i, span] of spans.entries()) await loadNight(fresh, span, `run-${i}`);
          const wallets = inOrderWallets(asks);
          const tiers = inOrderTiers(asks);
          expect(await walletHistory(fresh)).toEqual(wallets);
          expect(await tierHistory(fresh)).toEqual(tiers);
          // a run of identical asks is one row, whatever the number of asks
          expect(await rowCounts(fresh)).toEqual({
            _etl_loyalty_wallets_observations: wallets.length,
            loyalty_wallets_history: wallets.length,
            _etl_loyalty_status_observations: tiers.length,
            loyalty_status_history: tiers.length,
            _etl_loyalty_status_asked: asks.length,
          });
        } finally {
          await fresh.close();
        }
      }),
      { numRuns: 8 },
    );
  }, 300_000);
});

describe.each(testDestinations)('observations written one row per ask, before runs, into $name', (target) => {
  it('are rewritten as runs by the next commit that asks their customer, the versions unchanged', async () => {
    const destination = await openDestination((await target.fresh()).config);
    try {
      const quiet = { tier: 'Silver', wallets: { 'GR/EUR': '10', 'AE/AED': '5' } };
      const asks = [1, 2, 3, 4].map((day): Ask => ({ customer: 'C1', at: dayAt(day), state: quiet }));
      for (const ask of asks) await loadNight(destination, [ask]);
      // as the release before the runs left them: one row per key and ask, each its own run
      await destination.withConnection(async (conn) => {
        for (const table of ['_etl_loyalty_status_observations', '_etl_loyalty_wallets_observations']) {
          const columns = (
            await conn.all<{ column_name: string }>(
              `SELECT column_name FROM information_schema.columns WHERE table_name = $1 ORDER BY ordinal_position`,
              [table],
            )
          )
            .map((c) => c.column_name)
            .filter((c) => c !== 'observed_at' && c !== 'last_observed_at');
          await conn.run(
            `CREATE TEMP TABLE per_ask AS SELECT ${columns.map((c) => `o.${c}`).join(', ')}, l.observed_at
               FROM ${table} o JOIN _etl_loyalty_status_asked l
                 ON l.customer_id = o.customer_id AND l.observed_at BETWEEN o.observed_at AND o.last_observed_at`,
          );
          await conn.run(`DELETE FROM ${table}`);
          await conn.run(
            `INSERT INTO ${table} (${columns.join(', ')}, observed_at, last_observed_at)
             SELECT ${columns.join(', ')}, observed_at, observed_at FROM per_ask`,
          );
          await conn.run('DROP TABLE per_ask');
        }
      });
      expect(await rowCounts(destination)).toMatchObject({
        _etl_loyalty_wallets_observations: 8,
        _etl_loyalty_status_observations: 4,
      });
      const next: Ask = { customer: 'C1', at: dayAt(5), state: quiet };
      await loadNight(destination, [next]);
      expect(await walletHistory(destination)).toEqual(inOrderWallets([...asks, next]));
      expect(await rowCounts(destination)).toEqual({
        _etl_loyalty_wallets_observations: 2,
        loyalty_wallets_history: 2,
        _etl_loyalty_status_observations: 1,
        loyalty_status_history: 1,
        _etl_loyalty_status_asked: 5,
      });
    } finally {
      await destination.close();
    }
  });
});
