import { DateTime } from 'luxon';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Emulator, TruthCustomer } from '../../src/emulator/index.js';
import { LAST_DAY, ZONE, allPostings, call, parseNdjson, readTimestamp, start, text } from './emulator-fixture.js';
import { loyaltyAsWarehouse, replay } from './loyalty-oracle.js';

/** The day after the seeded data, 10:00 in Athens. */
const NOW = Date.parse('2024-11-16T08:00:00Z');
const RANGE_END = Date.parse('2024-11-16T00:00:00+02:00');

const identity = (c: TruthCustomer) => (c.phone ? `phone=${c.phone}` : `email=${encodeURIComponent(c.email!)}`);

describe('loyalty state as of the clock', () => {
  let emulator: Emulator;
  let now = NOW;
  let customers: TruthCustomer[];
  beforeAll(async () => {
    emulator = await start({ clock: () => now });
    customers = [...emulator.truth.customers(LAST_DAY)];
  });
  afterAll(() => emulator.close());

  const lookup = async (c: TruthCustomer) => call(emulator, `/accounts?${identity(c)}&includeLoyalty=true`);
  const postingsOf = async (c: TruthCustomer) => {
    const probe = await call(emulator, `/accounts/loyalty/postings?${identity(c)}&pageSize=1&pageNumber=1`);
    return probe.status === 404 ? [] : (await allPostings(emulator, identity(c), 1000)).reverse();
  };

  it('every lookup follows the documented rule, recomputed from the postings: buckets per expiry, FIFO redemption, expired points gone', async () => {
    const seen = { expiredInRange: 0, expiringLater: 0, twoWallets: 0, severalBuckets: 0 };
    for (const customer of customers) {
      const { status, body } = await lookup(customer);
      expect(status).toBe(200);
      const loyalty = body.loyalty;
      const expected = replay(await postingsOf(customer), now);
      expect(expected.overdrawn, customer.customer_id).toBe(0);
      expect(loyalty.cumulativeCredit).toBeCloseTo(expected.cumulativeCredit, 2);
      if (expected.wallets.size > 0) {
        expect(loyalty.wallets.map((w: any) => `${w.countryIso}/${w.currency}`)).toEqual([...expected.wallets.keys()]);
        expect(loyalty.wallets.map((w: any) => w.point)).toEqual(
          [...expected.wallets.values()].map((p) => expect.closeTo(p, 2)),
        );
      }
      const details = [...expected.details].map(([ms, d]) => ({
        expires: new Date(ms).toISOString(),
        gained: d.gained,
        redeemed: d.redeemed,
        expired: d.expired,
      }));
      const served = loyalty.balanceDetails.map((d: any) => ({
        expires: readTimestamp(d.expires),
        gained: d.loyaltyPointsGained,
        redeemed: d.loyaltyPointsRedeemed,
        expired: d.loyaltyPointsExpired,
      }));
      expect(served, customer.customer_id).toEqual(
        details.map((d) => ({
          ...d,
          gained: expect.closeTo(d.gained, 2),
          redeemed: expect.closeTo(d.redeemed, 2),
          expired: expect.closeTo(d.expired, 2),
        })),
      );
      // expiry.point/date: the soonest points still to expire, and their last valid day.
      const next = [...expected.details].find(([, d]) => d.remaining > 0);
      expect(loyalty.expiry.point).toBeCloseTo(next ? next[1].remaining : 0, 2);
      expect(loyalty.expiry.date).toBe(
        next ? DateTime.fromMillis(next[0], { zone: ZONE }).minus({ days: 1 }).toISODate() : null,
      );
      expect(loyalty.tier.order).toBe(
        loyalty.cumulativeCredit >= 5000
          ? 4
          : loyalty.cumulativeCredit >= 1500
            ? 3
            : loyalty.cumulativeCredit >= 300
              ? 2
              : 1,
      );
      expect(Date.parse(readTimestamp(loyalty.tier.expiry)!)).toBeGreaterThan(now);
      if (loyalty.tier.order < 4)
        expect(loyalty.toNextTier).toBeCloseTo(
          [300, 1500, 5000][loyalty.tier.order - 1]! - loyalty.cumulativeCredit,
          2,
        );

      if ([...expected.details].some(([ms, d]) => d.expired > 0 && ms <= RANGE_END)) seen.expiredInRange++;
      if ([...expected.details].some(([ms, d]) => d.remaining > 0 && ms > RANGE_END)) seen.expiringLater++;
      if (loyalty.wallets.length > 1) seen.twoWallets++;
      if (loyalty.balanceDetails.length > 1) seen.severalBuckets++;
    }
    // Enough of a 90-day dataset to test expiry in the data, expiry by moving the clock, two wallets and buckets.
    expect(seen.expiredInRange).toBeGreaterThanOrEqual(customers.length * 0.15);
    expect(seen.expiringLater).toBeGreaterThanOrEqual(customers.length * 0.6);
    expect(seen.twoWallets).toBeGreaterThanOrEqual(customers.length * 0.05);
    expect(seen.severalBuckets).toBeGreaterThanOrEqual(customers.length * 0.5);
  });

  it('the ground truth equals every lookup, read independently, and its NDJSON routes serve it flat', async () => {
    const truth = [...emulator.truth.loyaltyStatus(now)];
    expect(truth.map((t) => t.customer_id)).toEqual(customers.map((c) => c.customer_id));
    for (const [n, customer] of customers.entries()) {
      expect(loyaltyAsWarehouse(customer.customer_id, (await lookup(customer)).body.loyalty)).toEqual(truth[n]);
    }
    const asOf = new Date(now).toISOString();
    const statusRows = parseNdjson(await text(emulator, `/_emulator/truth/loyalty-status?asOf=${asOf}`));
    expect(statusRows).toEqual(truth.map(({ wallets: _, balance_details: __, ...status }) => status));
    expect(parseNdjson(await text(emulator, `/_emulator/truth/loyalty-wallets?asOf=${now}`))).toEqual(
      truth.flatMap((t) => t.wallets),
    );
    expect(parseNdjson(await text(emulator, '/_emulator/truth/loyalty-balance-details'))).toEqual(
      truth.flatMap((t) => t.balance_details),
    );
    expect([...emulator.truth.loyaltyWallets()]).toEqual(truth.flatMap((t) => t.wallets));
    expect((await call(emulator, '/_emulator/truth/loyalty-status?asOf=yesterday')).status).toBe(400);
  });

  it('a known customer without postings has a valid loyalty member with nothing in it', async () => {
    let without: TruthCustomer | undefined;
    for (const c of customers) {
      if ((await call(emulator, `/accounts/loyalty/postings?${identity(c)}&pageSize=1&pageNumber=1`)).status === 404) {
        without = c;
        break;
      }
    }
    expect(without).toBeDefined();
    const { status, body } = await lookup(without!);
    expect(status).toBe(200);
    expect(body.loyalty).toMatchObject({
      program: { name: 'Loyalty Club' },
      tier: { name: 'Bronze', order: 1 },
      wallets: [{ countryIso: 'GR', countryName: null, currency: 'EUR', point: 0, value: 0 }],
      redeemable: [{ countryIso: 'GR', countryName: null, currency: 'EUR', point: 0, value: 0 }],
      expiry: { point: 0, date: null },
      toNextTier: 300,
      cumulativeCredit: 0,
      balanceDetails: [],
    });
  });

  it('1005 for an unknown customer, and for one not created yet at the clock; postings after the clock do not count yet', async () => {
    for (const path of [
      '/accounts?phone=306999999999&includeLoyalty=true',
      '/accounts?email=nobody.1%40example.com&includeLoyalty=true',
    ]) {
      expect(await call(emulator, path)).toEqual({ status: 404, body: { code: 1005, message: 'Data Not Found' } });
    }
    now = Date.parse('2024-10-01T09:00:00Z');
    try {
      const truth = [...emulator.truth.loyaltyStatus()];
      expect(truth.length).toBeGreaterThan(0);
      expect(truth.length).toBeLessThan(customers.length);
      expect(truth.map((t) => t.customer_id)).toEqual(customers.slice(0, truth.length).map((c) => c.customer_id));
      const later = customers[truth.length]!;
      expect(await lookup(later)).toEqual({ status: 404, body: { code: 1005, message: 'Data Not Found' } });
      expect((await call(emulator, `/accounts/vouchers/get?${identity(later)}`)).body).toEqual([]);
      // A customer with postings on both sides of the clock counts only those made by then.
      let straddling = 0;
      for (const customer of customers.slice(0, truth.length)) {
        const all = await postingsOf(customer);
        const made = replay(all, now);
        const total = all.reduce((sum, p) => sum + p.credit, 0);
        if (made.cumulativeCredit > 0 && made.cumulativeCredit < total - 0.005) straddling++;
        expect((await lookup(customer)).body.loyalty.cumulativeCredit).toBeCloseTo(made.cumulativeCredit, 2);
      }
      expect(straddling).toBeGreaterThan(10);
    } finally {
      now = NOW;
    }
  });
});
