import { createServer, type Server } from 'node:http';
import { DateTime } from 'luxon';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LOYALTY_TIERS, type Emulator, type TruthCustomer } from '../../src/emulator/index.js';
import {
  LAST_DAY,
  ZONE,
  allPages,
  allPostings,
  call,
  canonical,
  readPostingTime,
  readTimestamp,
  start,
} from './emulator-fixture.js';
import { loyaltyAsWarehouse } from './loyalty-oracle.js';

/** The day after the seeded data, when the scripted activity happens (10:00 in Athens). */
const DAY = '2024-11-16';
const NOW = Date.parse('2024-11-16T08:00:00Z');

/** A subscriber that records what it is sent and answers 500 to the very first call. */
async function subscriber(): Promise<{ url: string; bodies: any[]; calls: () => number; close: () => Promise<void> }> {
  const bodies: any[] = [];
  let calls = 0;
  const server: Server = createServer((req, res) => {
    let text = '';
    req.on('data', (chunk) => (text += chunk));
    req.on('end', () => {
      calls++;
      if (calls === 1) {
        res.writeHead(500).end();
        return;
      }
      bodies.push(JSON.parse(text));
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    bodies,
    calls: () => calls,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/** Days the points earned in each tier stay valid (README, "Loyalty over time"). */
const VALID_DAYS = [30, 90, 180, 365];

/** When points credited on `day` in tier `order` expire: at the end of the month their validity ends in, as served. */
function expiresOf(day: string, order: number): string {
  const next = DateTime.fromISO(day, { zone: ZONE })
    .plus({ days: VALID_DAYS[order - 1]! })
    .startOf('month')
    .plus({ months: 1 });
  return `${next.toUTC().toFormat('yyyy-MM-dd HH:mm:ss')} UTC`;
}

let serial = 0;
/** A consistent sale of one item at `paid` (no tax, discount or extras), part of it `redeemed` in points. */
function sale(
  identityKey: 'account' | 'customer',
  identity: Record<string, unknown>,
  paid: number,
  redeemed = 0,
  receipt = `S-${++serial}`,
) {
  const billed = Math.round((paid + redeemed) * 100) / 100;
  return {
    [identityKey]: identity,
    receipt,
    openTime: `${DAY} 09:55:00`,
    closeTime: `${DAY} 09:58:00`,
    deviceName: 'POS-07',
    billed,
    paid,
    redeemed,
    billDiscount: 0,
    itemDiscountTotal: 0,
    billTax: 0,
    itemTaxTotal: 0,
    items: [{ sku: 'GIFT', qty: 1, unitPrice: billed }],
    payments: [{ name: 'EUR', typeName: 'card', amount: paid }],
    extras: [],
  };
}

describe('written activity: effects on the source, the ground truth and the loyalty webhook', () => {
  let emulator: Emulator;
  let hook: Awaited<ReturnType<typeof subscriber>>;
  let customers: TruthCustomer[];
  const dead = 'http://127.0.0.1:1/unreachable';
  beforeAll(async () => {
    hook = await subscriber();
    emulator = await start({
      clock: () => NOW,
      webhooks: { subscribers: [hook.url], maxAttempts: 3, retryDelayMs: 5 },
    });
    emulator.activity.subscribe(dead);
    customers = [...emulator.truth.customers(LAST_DAY)].filter((c) => c.phone && c.email);
  });
  afterAll(async () => {
    await emulator.close();
    await hook.close();
  });

  const post = (path: string, body: unknown, method = 'POST') =>
    call(emulator, path, { method, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const loyaltyOf = async (c: TruthCustomer) =>
    (await call(emulator, `/accounts?phone=${c.phone}&includeLoyalty=true`)).body.loyalty;
  const newestPostings = async (c: TruthCustomer, n: number) =>
    (await call(emulator, `/accounts/loyalty/postings?phone=${c.phone}&pageSize=${n}&pageNumber=1`)).body;
  const round2 = (x: number) => Math.round(x * 100) / 100;

  it('a transaction credits paid × the tier multiplier as a posting dated now, seen by postings, loyalty, vouchers and the webhook', async () => {
    const customer = customers[2]!;
    const before = await loyaltyOf(customer);
    const countBefore =
      (await call(emulator, `/accounts/loyalty/postings?phone=${customer.phone}&pageSize=1&pageNumber=1`)).body
        .totalCount ?? 0;
    expect(
      (await post('/accounts/transactions/submit', sale('account', { phone: customer.phone }, 40.5, 0, 'T-1'))).body,
    ).toEqual({ status: 'success' });

    const multiplier = 1 + (before.tier.order - 1) * 0.25;
    const credit = round2(40.5 * multiplier);
    const listing = await newestPostings(customer, 1);
    expect(listing.totalCount).toBe(countBefore + 1);
    expect(listing.data[0]).toMatchObject({
      credit,
      debit: 0,
      awardOn: 40.5,
      receipt: 'T-1',
      branchName: 'POS-07',
      type: 1,
      postingType: 1,
      tierName: before.tier.name,
    });
    expect(readPostingTime(listing.data[0].postingDate)).toBe(new Date(NOW).toISOString());
    expect(readPostingTime(listing.data[0].txnDate)).toBe(readTimestamp(`${DAY} 09:58:00`)); // closeTime, local time

    const after = await loyaltyOf(customer);
    expect(after.cumulativeCredit).toBeCloseTo(before.cumulativeCredit + credit, 2);
    expect(after.wallets[0].point).toBeCloseTo(before.wallets[0].point + credit, 2);
    // The credit is in the bucket of its expiry: the end of the month in which its tier's validity ends.
    const expires = expiresOf(DAY, before.tier.order);
    const gainedIn = (loyalty: any) =>
      loyalty.balanceDetails.find((d: any) => d.expires === expires)?.loyaltyPointsGained ?? 0;
    expect(gainedIn(after)).toBeCloseTo(gainedIn(before) + credit, 2);
    expect(after.expiry.date).not.toBeNull();

    const vouchers = (await call(emulator, `/accounts/vouchers/get?phone=${customer.phone}`)).body;
    expect(vouchers.at(-1)).toMatchObject({
      title: 'Loyalty points',
      value: after.redeemable[0].value,
      expires: after.expiry.date,
      enabled: after.redeemable[0].value > 0,
    });

    await emulator.activity.settled();
    const event = hook.bodies.find((b) => b.customer.accountId === customer.customer_id);
    expect(event.origin).toEqual({
      trigger: 'LOYALTY_POINT_UPDATED',
      source: 'POS',
      country: { iso: after.wallets[0].countryIso },
    });
    expect(event.customer.phone).toBe(customer.phone);
    expect(event.entity.wallets[0].point).toBe(after.wallets[0].point);
    expect(event.entity.cumulativeCredit).toBe(after.cumulativeCredit);
    expect(event.entity.loyaltyTier.name).toBe(after.tier.name);
    // The instant the next points expire: the start of the day after their last valid day, in the zone.
    const lastDay = DateTime.fromISO(after.expiry.date, { zone: ZONE }).plus({ days: 1 });
    expect(event.entity.pointExpiry).toBe(`${lastDay.toUTC().toFormat('yyyy-MM-dd HH:mm:ss')} UTC`);
    expect(event.generic).toBe(false);
  });

  it('a purchase that reaches the next tier changes the tier, and the next sale earns at its rate; a redemption debits', async () => {
    // A customer still in the first tier, with enough points to redeem 1.00 (20 points) later.
    let customer: TruthCustomer | undefined;
    let before: any;
    for (const c of customers.slice(30)) {
      before = await loyaltyOf(c);
      if (before.tier.order === 1 && before.wallets[0].point >= 20) {
        customer = c;
        break;
      }
    }
    expect(customer).toBeDefined();
    const silver = LOYALTY_TIERS[1]!;
    const paid = round2(silver.attain - before.cumulativeCredit + 1);
    const purchase = { ...sale('customer', { email: customer!.email }, paid), ecommerce: { time: String(NOW) } };
    expect((await post('/ecommactivity/purchase', purchase)).body).toEqual({ status: 'success' });
    const promoted = await loyaltyOf(customer!);
    expect(promoted.tier.name).toBe(silver.name);
    expect((await newestPostings(customer!, 1)).data[0]).toMatchObject({
      brandName: 'Loyalty Club Online',
      branchName: 'Web shop',
      tierName: 'Bronze',
      credit: paid,
    });

    expect(
      (await post('/accounts/transactions/submit', sale('account', { phone: customer!.phone }, 10, 1))).status,
    ).toBe(200);
    const [credit, debit] = (await newestPostings(customer!, 2)).data;
    expect(debit).toMatchObject({ debit: 20, debitValue: 1, credit: 0, type: 2, postingType: 2, awardOn: null });
    expect(credit).toMatchObject({ credit: 12.5, awardOn: 10, tierName: silver.name, tierOrder: 2 });
    expect((await loyaltyOf(customer!)).wallets[0].point).toBeCloseTo(promoted.wallets[0].point - 20 + 12.5, 2);
  });

  it('a rollback debits what the sale credited and credits back what it redeemed; the original postings stay', async () => {
    const customer = customers[10]!;
    const before = await loyaltyOf(customer);
    const redeem = before.wallets[0].point >= 10 ? 0.5 : 0;
    const body = sale('account', { phone: customer.phone }, 30, redeem, 'T-ROLL');
    expect((await post('/accounts/transactions/submit', body)).status).toBe(200);
    const booked = (await newestPostings(customer, redeem ? 2 : 1)).data;
    const { account, ...rest } = body;
    expect(
      (await post('/accounts/transactions/rollback', { ...rest, customer: account, closeTime: `${DAY} 11:00:00` }))
        .body,
    ).toEqual({ status: 'success' });
    const newest = (await newestPostings(customer, booked.length * 2)).data;
    expect(newest.slice(booked.length)).toEqual(booked);
    const reversal = newest.slice(0, booked.length);
    expect(reversal.map((p: any) => [p.credit, p.debit, p.type, p.receipt])).toEqual(
      booked.map((p: any) => [p.debit, p.credit, 4, 'T-ROLL']).reverse(),
    );
    expect((await loyaltyOf(customer)).wallets[0].point).toBeCloseTo(before.wallets[0].point, 2);
    await emulator.activity.settled();
    expect(
      hook.bodies.filter((b) => b.customer.accountId === customer.customer_id).map((b) => b.origin.source),
    ).toEqual(['POS', 'ROLLBACK']);
  });

  it('a sale without a known customer is accepted and earns nothing; appointments and page views change no points', async () => {
    await emulator.activity.settled();
    const events = emulator.activity.webhookStats();
    expect((await post('/accounts/transactions/submit', sale('account', { phone: '306999999999' }, 12))).body).toEqual({
      status: 'success',
    });
    const appointment = {
      account: { phone: customers[0]!.phone },
      referenceNumber: 'AP-1',
      start: `${DAY} 12:00:00`,
      end: `${DAY} 13:00:00`,
      status: 1,
      items: [{ sku: 'CUT', name: 'Cut', price: 20, duration: 60 }],
    };
    expect((await post('/accounts/appointments/submit', appointment)).status).toBe(200);
    expect(
      (
        await post('/ecommactivity/pageview', {
          items: [{ type: 'Product', sku: 'A', qty: '1', name: 'A' }],
          ecommerce: { time: '1' },
        })
      ).status,
    ).toBe(200);
    await emulator.activity.settled();
    expect(emulator.activity.webhookStats().delivered).toBe(events.delivered);
  });

  it('a modify puts the account in the accounts export of that day, as of the change, and in the ground truth', async () => {
    const customer = customers[20]!;
    const identity = {
      phone: customer.phone,
      city: 'Ναύπλιο',
      language: null,
      businessFields: { pet: 'cat', 'Bob\'s "tier"': 'x' },
    };
    expect((await post('/accounts/update', identity, 'PUT')).body).toEqual({ status: 'success' });
    const { records, totalCount } = await allPages(emulator, 'accounts', DAY, DAY);
    expect(totalCount).toBe(1);
    const record = records[0];
    expect(record.customerId).toBe(customer.customer_id);
    expect(record.city).toBe('Ναύπλιο');
    expect(canonical(record.language)).toBeNull();
    expect(record.customFieldMap).toMatchObject({ pet: 'cat', 'Bob\'s "tier"': 'x' });
    expect(readTimestamp(record.profileSet)).toBe(new Date(NOW).toISOString());

    const [truth] = [...emulator.truth.accounts(DAY, DAY)];
    expect(truth).toMatchObject({
      customer_id: customer.customer_id,
      city: 'Ναύπλιο',
      language: null,
      profile_set_at: new Date(NOW).toISOString(),
    });
    expect(truth!.custom_fields.pet).toBe('cat');
    expect(
      (await call(emulator, `/accounts?email=${encodeURIComponent(customer.email!)}&includeLoyalty=false`)).body.profile
        .city,
    ).toBe('Ναύπλιο');

    // A window over seeded days and the day of the change serves the customer once, as changed.
    const week = await allPages(emulator, 'accounts', '2024-11-01', DAY);
    expect(week.records.filter((r) => r.customerId === customer.customer_id).map((r) => r.city)).toEqual(['Ναύπλιο']);
    expect([...emulator.truth.accounts('2024-11-01', DAY)].length).toBe(week.totalCount);
  });

  it('the ground truth holds every written posting, as the postings endpoint serves them', async () => {
    const written = [...emulator.truth.postings(DAY, DAY)];
    expect(written.length).toBeGreaterThanOrEqual(6);
    for (const customerId of new Set(written.map((p) => p.customer_id))) {
      const c = customers.find((x) => x.customer_id === customerId)!;
      const served = (await allPostings(emulator, `phone=${c.phone}`)).filter((p) => p.postingDate.startsWith(DAY));
      expect(served.map((p) => [p.receipt, p.credit, p.debit])).toEqual(
        written
          .filter((p) => p.customer_id === customerId)
          .map((p) => [p.receipt, p.credit, p.debit])
          .reverse(),
      );
    }
    expect(
      [...emulator.truth.postings('2024-11-01', LAST_DAY)].some((p) => p.posted_at >= new Date(NOW).toISOString()),
    ).toBe(false);
  });

  it('the loyalty and voucher ground truth holds what the writes changed, as the lookups serve it', async () => {
    const written = new Set([...emulator.truth.postings(DAY, DAY)].map((p) => p.customer_id));
    expect(written.size).toBeGreaterThanOrEqual(3);
    const status = new Map([...emulator.truth.loyaltyStatus()].map((t) => [t.customer_id, t]));
    const vouchers = [...emulator.truth.vouchers()];
    for (const customerId of written) {
      const c = customers.find((x) => x.customer_id === customerId)!;
      expect(loyaltyAsWarehouse(customerId, await loyaltyOf(c))).toEqual(status.get(customerId));
      const served = (await call(emulator, `/accounts/vouchers/get?phone=${c.phone}`)).body;
      expect(served.at(-1).code).toBe(`P${customerId.slice(1)}`);
      expect(
        vouchers.filter((v) => v.customer_id === customerId).map((v) => [v.code, v.value, v.expires_on, v.enabled]),
      ).toEqual(served.map((v: any) => [v.code, v.value, v.expires, v.enabled]));
    }
  });

  it('retries a failed webhook call with back-off and gives up on a dead subscriber after maxAttempts', async () => {
    await emulator.activity.settled();
    const stats = emulator.activity.webhookStats();
    const events = hook.bodies.length;
    expect(events).toBeGreaterThanOrEqual(5);
    expect(hook.calls()).toBe(events + 1); // the first call was answered 500 and sent again
    expect(stats).toEqual({ delivered: events, failed: events, attempts: events + 1 + 3 * events, pending: 0 });
    const listed = (await call(emulator, '/_emulator/webhooks')).body;
    expect(listed.subscribers).toEqual([hook.url, dead]);
  });

  it('leaves the seeded data of customers nobody wrote about exactly as a fresh emulator serves it', async () => {
    const pristine = await start({ clock: () => NOW });
    try {
      const untouched = customers.at(-1)!;
      for (const path of [
        `/accounts?phone=${untouched.phone}&includeLoyalty=true`,
        `/accounts/loyalty/postings?phone=${untouched.phone}&pageSize=50&pageNumber=1`,
        `/accounts/vouchers/get?phone=${untouched.phone}`,
        `/business-data/accounts?start=2024-11-10&end=${LAST_DAY}&page=1&size=100`,
      ]) {
        expect((await call(emulator, path)).body, path).toEqual((await call(pristine, path)).body);
      }
    } finally {
      await pristine.close();
    }
  });
});
