import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { DateTime } from 'luxon';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Emulator, TruthCustomer, TruthLoyalty } from '../../src/emulator/index.js';
import { LAST_DAY, ZONE, call, readTimestamp, start } from './emulator-fixture.js';
import { loyaltyAsWarehouse } from './loyalty-oracle.js';

/** The day after the seeded data, 10:00 in Athens. */
const NOW = Date.parse('2024-11-16T08:00:00Z');
const local = (iso: string) => DateTime.fromISO(iso, { zone: ZONE }).toMillis();

/** A subscriber that records every body it is sent. */
async function subscriber(): Promise<{ url: string; bodies: any[]; close: () => Promise<void> }> {
  const bodies: any[] = [];
  const server: Server = createServer((req, res) => {
    let text = '';
    req.on('data', (chunk) => (text += chunk));
    req.on('end', () => {
      bodies.push(JSON.parse(text));
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    bodies,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

const identity = (c: TruthCustomer) => (c.phone ? `phone=${c.phone}` : `email=${encodeURIComponent(c.email!)}`);
const pointsOf = (t: TruthLoyalty) => t.wallets.reduce((sum, w) => sum + w.points, 0);

describe('points that expire without a request', () => {
  let emulator: Emulator;
  let hook: Awaited<ReturnType<typeof subscriber>>;
  let now = NOW;
  let customers: TruthCustomer[];
  beforeAll(async () => {
    hook = await subscriber();
    emulator = await start({ clock: () => now, webhooks: { subscribers: [hook.url], retryDelayMs: 5 } });
    customers = [...emulator.truth.customers(LAST_DAY)];
  });
  afterAll(async () => {
    await emulator.close();
    await hook.close();
  });

  const lookup = async (c: TruthCustomer) =>
    (await call(emulator, `/accounts?${identity(c)}&includeLoyalty=true`)).body.loyalty;
  const byId = (rows: Iterable<TruthLoyalty>) => new Map([...rows].map((t) => [t.customer_id, t]));

  it('passing the end of a month expires what was left of its points: the lookup and the truth change, and each customer gets one EXPIRY event', async () => {
    const before = byId(emulator.truth.loyaltyStatus());
    // Between now and 1 December (Athens) the only expiry instant is the end of November.
    const due = [...before.values()].filter((t) => t.points_expiring_on === '2024-11-30');
    expect(due.length).toBeGreaterThan(10);
    expect(due.every((t) => t.points_expiring > 0)).toBe(true);

    now = local('2024-12-01T00:00:00') - 1;
    expect(await emulator.activity.checkExpiries()).toBe(0);
    expect((await lookup(customers.find((c) => c.customer_id === due[0]!.customer_id)!)).expiry.date).toBe(
      '2024-11-30',
    );

    now = local('2024-12-01T00:00:00');
    expect(await emulator.activity.checkExpiries()).toBe(due.length);
    await emulator.activity.settled();
    expect(hook.bodies.map((b) => b.customer.accountId).sort()).toEqual(due.map((t) => t.customer_id).sort());
    expect(new Set(hook.bodies.map((b) => `${b.origin.trigger} ${b.origin.source}`))).toEqual(
      new Set(['LOYALTY_POINT_UPDATED EXPIRY']),
    );

    const after = byId(emulator.truth.loyaltyStatus());
    for (const was of due) {
      const customer = customers.find((c) => c.customer_id === was.customer_id)!;
      const served = await lookup(customer);
      const expired = served.balanceDetails.find((d: any) => readTimestamp(d.expires) === new Date(now).toISOString());
      expect(expired.loyaltyPointsExpired).toBeCloseTo(was.points_expiring, 2);
      expect(served.wallets.reduce((sum: number, w: any) => sum + w.point, 0)).toBeCloseTo(
        pointsOf(was) - was.points_expiring,
        2,
      );
      expect(served.expiry.date === null || served.expiry.date > '2024-11-30').toBe(true);
      expect(loyaltyAsWarehouse(customer.customer_id, served)).toEqual(after.get(customer.customer_id));
      const event = hook.bodies.find((b) => b.customer.accountId === customer.customer_id);
      expect(event.entity.wallets.map((w: any) => w.point)).toEqual(served.wallets.map((w: any) => w.point));
      expect(event.entity.pointExpiry === null ? null : readTimestamp(event.entity.pointExpiry)).toBe(
        served.expiry.date === null
          ? null
          : DateTime.fromISO(served.expiry.date, { zone: ZONE }).plus({ days: 1 }).toUTC().toISO(),
      );
    }
    // Nobody else changed.
    for (const [id, row] of before) if (!due.some((t) => t.customer_id === id)) expect(after.get(id)).toEqual(row);

    // The same instant checked again sends nothing more.
    expect(await emulator.activity.checkExpiries()).toBe(0);
    await emulator.activity.settled();
    expect(hook.bodies).toHaveLength(due.length);
  });

  it('a jump over two month ends sends one event per customer and instant, each as of its instant; POST /_emulator/expiries checks too', async () => {
    hook.bodies.length = 0;
    const instants = [local('2025-01-01T00:00:00'), local('2025-02-01T00:00:00')];
    now = instants[1]! + 3_600_000;
    const expected = [...emulator.truth.loyaltyBalanceDetails()]
      .filter((d) => d.points_expired > 0 && instants.includes(Date.parse(d.expires_at)))
      .map((d) => ({ customer: d.customer_id, at: Date.parse(d.expires_at) }));
    expect(new Set(expected.map((e) => e.at)).size).toBe(2);
    expect((await call(emulator, '/_emulator/expiries', { method: 'POST' })).body).toEqual({ events: expected.length });
    await emulator.activity.settled();
    expect(hook.bodies.map((b) => b.customer.accountId).sort()).toEqual(expected.map((e) => e.customer).sort());
    const asOf = new Map(instants.map((ms) => [ms, byId(emulator.truth.loyaltyStatus(ms))]));
    for (const { customer, at } of expected) {
      const truth = asOf.get(at)!.get(customer)!;
      const points = truth.wallets.map((w) => w.points);
      expect(
        hook.bodies.some(
          (b) =>
            b.customer.accountId === customer &&
            JSON.stringify(b.entity.wallets.map((w: any) => w.point)) === JSON.stringify(points),
        ),
      ).toBe(true);
    }
    expect((await call(emulator, '/_emulator/expiries', { method: 'POST' })).body).toEqual({ events: 0 });
  });

  it('with expiryCheckMs the emulator checks by itself', async () => {
    const own = await subscriber();
    let clock = NOW;
    const timed = await start({
      clock: () => clock,
      expiryCheckMs: 10,
      webhooks: { subscribers: [own.url], retryDelayMs: 5 },
    });
    try {
      const due = [...timed.truth.loyaltyStatus()].filter((t) => t.points_expiring_on === '2024-11-30').length;
      clock = local('2024-12-01T00:00:05');
      for (let waited = 0; own.bodies.length < due && waited < 200; waited++)
        await new Promise((resolve) => setTimeout(resolve, 50));
      await timed.activity.settled();
      expect(own.bodies).toHaveLength(due);
    } finally {
      await timed.close();
      await own.close();
    }
  });
});
