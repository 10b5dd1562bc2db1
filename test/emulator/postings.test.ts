import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Emulator, TruthCustomer } from '../../src/emulator/index.js';
import {
  FIRST_DAY,
  LAST_DAY,
  allPostings,
  call,
  dayOf,
  daysBetween,
  readPostingTime,
  start,
} from './emulator-fixture.js';

const POSTING_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}\+0000$/;

function identity(customer: TruthCustomer): string {
  return customer.phone ? `phone=${customer.phone}` : `email=${encodeURIComponent(customer.email!)}`;
}

describe('loyalty postings', () => {
  let emulator: Emulator;
  let customers: TruthCustomer[];
  let counts: Map<string, number>;
  beforeAll(async () => {
    emulator = await start();
    customers = [...emulator.truth.customers(LAST_DAY)];
    counts = new Map();
    for (const p of emulator.truth.postings('2000-01-01', LAST_DAY))
      counts.set(p.customer_id, (counts.get(p.customer_id) ?? 0) + 1);
  });
  afterAll(() => emulator.close());

  it('answers 1005 for a customer without postings and for an unknown one', async () => {
    const none = customers.find((c) => !counts.has(c.customer_id))!;
    expect(none).toBeDefined();
    for (const query of [identity(none), 'phone=306999999999', 'email=nobody.1%40example.com']) {
      const { status, body } = await call(emulator, `/accounts/loyalty/postings?${query}&pageSize=10&pageNumber=1`);
      expect(status).toBe(404);
      expect(body).toEqual({ code: 1005, message: 'Data Not Found' });
    }
    expect(customers.filter((c) => !counts.has(c.customer_id)).length / customers.length).toBeGreaterThan(0.08);
  });

  it('pages a long history newest first, matching the ground truth', async () => {
    const [longId, count] = [...counts].sort((a, b) => b[1] - a[1])[0]!;
    expect(count).toBeGreaterThanOrEqual(300);
    const customer = customers.find((c) => c.customer_id === longId)!;
    const served = await allPostings(emulator, identity(customer), 70);
    expect(served).toHaveLength(count);
    const times = served.map((p) => readPostingTime(p.postingDate));
    expect(times).toEqual([...times].sort().reverse());
    const truth = [...emulator.truth.postings('2000-01-01', LAST_DAY)].filter((p) => p.customer_id === longId);
    const asTruth = served.map((p) => ({
      customer_id: longId,
      posted_at: readPostingTime(p.postingDate),
      txn_at: readPostingTime(p.txnDate),
      credit: p.credit,
      credit_value: p.creditValue,
      debit: p.debit,
      debit_value: p.debitValue,
      award_on: p.awardOn,
      currency: p.currency,
      receipt: p.receipt,
      branch_name: p.branchName,
      brand_name: p.brandName,
      country_iso: p.countryIso,
      country: p.country,
      tier_order: p.tierOrder,
      tier_name: p.tierName,
      type: p.type,
      posting_type: p.postingType,
    }));
    expect(asTruth.reverse()).toEqual(truth);
  });

  it('serves exact duplicate postings', async () => {
    let duplicates = 0;
    for (const customer of customers.filter((c) => counts.has(c.customer_id)).slice(0, 60)) {
      const seen = new Set<string>();
      for (const posting of await allPostings(emulator, identity(customer), 1000)) {
        const key = JSON.stringify(posting);
        if (seen.has(key)) duplicates++;
        seen.add(key);
      }
    }
    expect(duplicates).toBeGreaterThan(0);
  });

  it('finds a customer by phone or by e-mail alike, and a phone-less one by e-mail', async () => {
    const both = customers.find((c) => c.phone && c.email && counts.has(c.customer_id))!;
    const byPhone = await call(emulator, `/accounts/loyalty/postings?phone=${both.phone}&pageSize=5&pageNumber=1`);
    const byEmail = await call(
      emulator,
      `/accounts/loyalty/postings?email=${encodeURIComponent(both.email!)}&pageSize=5&pageNumber=1`,
    );
    expect(byPhone.status).toBe(200);
    expect(byEmail.body).toEqual(byPhone.body);
    const emailOnly = customers.find((c) => !c.phone && counts.has(c.customer_id))!;
    const found = await call(
      emulator,
      `/accounts/loyalty/postings?email=${encodeURIComponent(emailOnly.email!)}&pageSize=5&pageNumber=1`,
    );
    expect(found.body.totalCount).toBe(counts.get(emailOnly.customer_id));
  });

  it('writes the fields the way the source does', async () => {
    const customer = customers.find((c) => (counts.get(c.customer_id) ?? 0) > 20)!;
    const postings = await allPostings(emulator, identity(customer));
    for (const p of postings) {
      expect(p.postingDate).toMatch(POSTING_TIME);
      expect(p.txnDate).toMatch(POSTING_TIME);
      expect(p.txnDate <= p.postingDate).toBe(true);
      expect(
        p.postingType === 2 ? p.debit > 0 && p.credit === 0 && p.awardOn === null : p.credit > 0 && p.debit === 0,
      ).toBe(true);
    }
    const all = [...emulator.truth.postings('2000-01-01', LAST_DAY)];
    expect(all.some((p) => p.posting_type === 2)).toBe(true);
    expect(all.some((p) => p.posting_type === 1 && p.award_on === null)).toBe(true);
    expect(all.some((p) => !Number.isInteger(p.credit_value * 100))).toBe(true); // more than 2 decimals
  });

  it('answers a page past the end with no data and the true totalCount', async () => {
    const customer = customers.find((c) => counts.has(c.customer_id))!;
    const { status, body } = await call(
      emulator,
      `/accounts/loyalty/postings?${identity(customer)}&pageSize=10&pageNumber=999`,
    );
    expect(status).toBe(200);
    expect(body).toEqual({ pageNumber: 999, pageSize: 10, totalCount: counts.get(customer.customer_id), data: [] });
  });

  it('serves oldest first when configured', async () => {
    const oldestFirst = await start({ postingsOrder: 'oldest-first' });
    try {
      const customer = customers.find((c) => (counts.get(c.customer_id) ?? 0) > 15)!;
      const newest = await allPostings(emulator, identity(customer), 4);
      const oldest = await allPostings(oldestFirst, identity(customer), 4);
      expect(oldest).toEqual([...newest].reverse());
      const times = oldest.map((p) => p.postingDate);
      expect(times).toEqual([...times].sort());
    } finally {
      await oldestFirst.close();
    }
  });

  it('dates postings after the customer was created and within the data range', () => {
    const createdOn = new Map<string, string>();
    for (const day of daysBetween(FIRST_DAY, LAST_DAY)) {
      for (const c of emulator.truth.customers(day))
        if (!createdOn.has(c.customer_id)) createdOn.set(c.customer_id, day);
    }
    expect(createdOn.size).toBe(300);
    for (const p of emulator.truth.postings('2000-01-01', LAST_DAY)) {
      expect(dayOf(p.txn_at) >= createdOn.get(p.customer_id)!).toBe(true);
      expect(dayOf(p.posted_at) <= LAST_DAY).toBe(true);
      expect(p.txn_at <= p.posted_at).toBe(true);
    }
  });

  it('has a share of customers with neither phone nor e-mail when asked, the same for a seed, and nothing else changes', async () => {
    const contactless = await start({ contactlessRate: 0.05 });
    try {
      const others = [...contactless.truth.customers(LAST_DAY)];
      const without = others.filter((c) => c.phone === null && c.email === null);
      expect(customers.filter((c) => c.phone === null && c.email === null)).toEqual([]);
      expect(without.length).toBeGreaterThan(5);
      expect(without.length).toBeLessThan(30);
      // only those customers differ, and the export serves them without phone and e-mail
      const ids = new Set(without.map((c) => c.customer_id));
      expect(others.filter((c) => !ids.has(c.customer_id))).toEqual(customers.filter((c) => !ids.has(c.customer_id)));
      const served = [...contactless.truth.accounts(FIRST_DAY, LAST_DAY)].filter((a) => ids.has(a.customer_id));
      expect(served.length).toBeGreaterThan(0);
      for (const a of served) expect([a.phone, a.email]).toEqual([null, null]);
      // the postings endpoint cannot be asked about them, so the truth holds none of their postings
      const listed = [...contactless.truth.postings('2000-01-01', LAST_DAY)];
      expect(listed.filter((p) => ids.has(p.customer_id))).toEqual([]);
      expect(listed.length).toBe(
        [...emulator.truth.postings('2000-01-01', LAST_DAY)].filter((p) => !ids.has(p.customer_id)).length,
      );
      expect((await call(contactless, '/accounts/loyalty/postings?pageSize=10&pageNumber=1')).status).toBe(400);
    } finally {
      await contactless.close();
    }
  });
});
