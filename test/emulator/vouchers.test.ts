import { DateTime } from 'luxon';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Emulator, TruthCustomer } from '../../src/emulator/index.js';
import { LAST_DAY, ZONE, call, parseNdjson, readTimestamp, start, text } from './emulator-fixture.js';

/** The day after the seeded data, 10:00 in Athens. */
const NOW = Date.parse('2024-11-16T08:00:00Z');
const DAY_MS = 86_400_000;

const identity = (c: TruthCustomer) => (c.phone ? `phone=${c.phone}` : `email=${encodeURIComponent(c.email!)}`);
const localDay = (ms: number) => DateTime.fromMillis(ms, { zone: ZONE }).toISODate()!;

/** What a warehouse holds for a served voucher, read without the emulator's code. */
function voucherAsWarehouse(customerId: string, v: any) {
  return {
    customer_id: customerId,
    code: v.code,
    title: v.title,
    icon: v.icon,
    value: v.value,
    value_type: v.valueType,
    expires_on: v.expires,
    enabled: v.enabled,
    status: v.status,
    redeemed_at: readTimestamp(v.redeemed),
    redeemed_branch: v.redeemedBranch,
  };
}

describe('vouchers over time', () => {
  let emulator: Emulator;
  let now = NOW;
  let customers: TruthCustomer[];
  beforeAll(async () => {
    emulator = await start({ clock: () => now });
    customers = [...emulator.truth.customers(LAST_DAY)];
  });
  afterAll(() => emulator.close());

  const vouchersOf = async (c: TruthCustomer) =>
    (await call(emulator, `/accounts/vouchers/get?${identity(c)}`)).body as any[];

  it('every customer’s list equals the ground truth, at several instants', async () => {
    for (const at of [NOW, NOW + 20 * DAY_MS, NOW + 75 * DAY_MS, Date.parse('2026-02-01T12:00:00Z')]) {
      now = at;
      const served: unknown[] = [];
      for (const customer of customers)
        served.push(...(await vouchersOf(customer)).map((v) => voucherAsWarehouse(customer.customer_id, v)));
      const truth = [...emulator.truth.vouchers()];
      expect(served).toEqual(truth);
      expect(parseNdjson(await text(emulator, `/_emulator/truth/vouchers?asOf=${at}`))).toEqual(truth);
      expect(new Set(truth.map((v) => `${v.customer_id} ${v.code}`)).size).toBe(truth.length);
    }
    now = NOW;
  });

  it('vouchers are issued, redeemed or expire, and vanish 30 days later; never active again', async () => {
    const watched = customers.slice(0, 60);
    /** Per customer × code: what each step saw (null: not listed). */
    const history = new Map<string, Array<{ at: number; v: any | null }>>();
    const steps = Array.from({ length: 40 }, (_, n) => NOW + n * 5 * DAY_MS);
    for (const [n, at] of steps.entries()) {
      now = at;
      for (const customer of watched) {
        const listed = new Map((await vouchersOf(customer)).map((v) => [v.code, v]));
        for (const code of listed.keys()) {
          const key = `${customer.customer_id} ${code}`;
          if (!history.has(key)) history.set(key, n === 0 ? [] : [{ at: steps[n - 1]!, v: null }]);
        }
        for (const [key, seen] of history)
          if (key.startsWith(`${customer.customer_id} `))
            seen.push({ at, v: listed.get(key.slice(key.indexOf(' ') + 1)) ?? null });
      }
    }
    now = NOW;
    const count = { issuedLater: 0, redeemed: 0, expired: 0, vanished: 0, labelled: 0, local: 0, percent: 0 };
    for (const [key, seen] of history) {
      const states = seen.map((s) => s.v?.status ?? 'unlisted');
      // The order of a life: not yet listed → active → redeemed or expired → gone, never back.
      let listedOnce = false;
      const ranks = states.map((state) => {
        listedOnce ||= state !== 'unlisted';
        return state === 'unlisted' ? (listedOnce ? 3 : 0) : state === 'active' ? 1 : 2;
      });
      expect(ranks, `${key}: ${states.join(' ')}`).toEqual([...ranks].sort((a, b) => a - b));
      expect(new Set(states.filter((s) => s === 'redeemed' || s === 'expired')).size, key).toBeLessThanOrEqual(1);
      if (states[0] === 'unlisted' && states.includes('active')) count.issuedLater++;
      for (const { at, v } of seen) {
        if (!v) continue;
        if (v.valueType === 'percent') count.percent++;
        expect(v.enabled).toBe(v.status === 'active');
        if (v.status === 'active') expect(localDay(at) <= v.expires).toBe(true);
        if (v.status === 'expired') expect(localDay(at) > v.expires).toBe(true);
        if (v.status === 'redeemed') {
          const redeemedAt = Date.parse(readTimestamp(v.redeemed)!);
          expect(redeemedAt).toBeLessThanOrEqual(at);
          expect(localDay(redeemedAt) <= v.expires).toBe(true);
          expect(typeof v.redeemedBranch === 'string' && v.redeemedBranch.length > 0).toBe(true);
        } else {
          expect([v.redeemed, v.redeemedBranch]).toEqual([null, null]);
        }
      }
      const used = seen.find((s) => s.v?.status === 'redeemed' || s.v?.status === 'expired');
      if (used?.v.status === 'redeemed') {
        count.redeemed++;
        if (used.v.redeemed.endsWith(' UTC')) count.labelled++;
        else count.local++;
      }
      if (used?.v.status === 'expired') count.expired++;
      const gone = seen.findIndex((s, n) => n > 0 && s.v === null && seen[n - 1]!.v !== null);
      if (gone > 0) {
        count.vanished++;
        const last = seen[gone - 1]!.v;
        expect(last.status, `${key} vanished while active`).not.toBe('active');
        const endedAt =
          last.status === 'redeemed'
            ? Date.parse(readTimestamp(last.redeemed)!)
            : DateTime.fromISO(last.expires, { zone: ZONE }).plus({ days: 1 }).toMillis();
        expect(seen[gone]!.at - endedAt).toBeGreaterThanOrEqual(30 * DAY_MS);
        expect(seen[gone - 1]!.at - endedAt).toBeLessThan(30 * DAY_MS);
      }
    }
    expect(count.issuedLater).toBeGreaterThan(50);
    expect(count.redeemed).toBeGreaterThan(20);
    expect(count.expired).toBeGreaterThan(20);
    expect(count.vanished).toBeGreaterThan(20);
    expect(count.labelled).toBeGreaterThan(0);
    expect(count.local).toBeGreaterThan(0);
    expect(count.percent).toBeGreaterThan(0);
  });
});
