import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CUSTOM_FIELD_NAMES, type Emulator, type TruthCustomer } from '../../src/emulator/index.js';
import { LAST_DAY, allPostings, call, start } from './emulator-fixture.js';

describe('read endpoints', () => {
  let emulator: Emulator;
  let customers: TruthCustomer[];
  beforeAll(async () => {
    emulator = await start();
    customers = [...emulator.truth.customers(LAST_DAY)];
  });
  afterAll(() => emulator.close());

  it('fetches the integration by token', async () => {
    const { status, body } = await call(emulator, '/accounts/integrations', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ integrationToken: 'tok-123' }),
    });
    expect(status).toBe(200);
    expect(body.integrationToken).toBe('tok-123');
    expect(body.created).toMatch(/^[A-Z][a-z]{2} \d{1,2}, \d{4} \d{1,2}:\d{2}:\d{2} [AP]M$/);
    expect(Object.keys(body.onlineAPIClientDTO)).toEqual([
      'id',
      'progId',
      'title',
      'siteId',
      'source',
      'apiToken',
      'retired',
      'created',
      'createdBy',
    ]);
  });

  it('gets a customer with loyalty computed from its postings', async () => {
    const customer = customers.find((c) => c.phone && c.email)!;
    const { status, body } = await call(emulator, `/accounts?phone=${customer.phone}&includeLoyalty=true`);
    expect(status).toBe(200);
    expect(body.profile.accountId).toBe(customer.customer_id);
    expect(body.profile.phone).toBe(Number(customer.phone)); // a number, as in the source's sample
    const latest = [...emulator.truth.accounts('2000-01-01', LAST_DAY)].find(
      (a) => a.customer_id === customer.customer_id,
    )!;
    expect(body.profile.businessFields).toEqual(latest.custom_fields);
    const probe = await call(emulator, `/accounts/loyalty/postings?phone=${customer.phone}&pageSize=1&pageNumber=1`);
    const postings = probe.status === 200 ? await allPostings(emulator, `phone=${customer.phone}`) : [];
    const credit = postings.reduce((sum, p) => sum + p.credit, 0);
    expect(body.loyalty.cumulativeCredit).toBeCloseTo(credit, 2);
    const withoutLoyalty = await call(
      emulator,
      `/accounts?email=${encodeURIComponent(customer.email!)}&includeLoyalty=false`,
    );
    expect(withoutLoyalty.body).toEqual({ profile: body.profile });
  });

  it('searches by partial names, paged', async () => {
    const { body } = await call(
      emulator,
      '/accounts/search?first=ari&businessFieldsRequired=loyaltyTier,select&page=1&size=5',
    );
    expect(body.totalCount).toBeGreaterThan(5);
    expect(body.data).toHaveLength(5);
    for (const r of body.data) {
      expect(r.first.toLowerCase()).toContain('ari');
      expect(r.profileSet).toMatch(/ UTC$/);
      expect(Object.keys(r.businessFields).every((k) => k === 'loyaltyTier' || k === 'select')).toBe(true);
    }
    const everyone = await call(emulator, '/accounts/search?businessFieldsRequired=&page=2&size=100');
    expect(everyone.body.totalCount).toBe(300);
    expect(everyone.body.data[0].accountId).toBe('C000101');
  });

  it('lists vouchers deterministically, empty for an unknown customer', async () => {
    const customer = customers.find((c) => c.email)!;
    const first = await call(emulator, `/accounts/vouchers/get?email=${encodeURIComponent(customer.email!)}`);
    const again = await call(emulator, `/accounts/vouchers/get?email=${encodeURIComponent(customer.email!)}`);
    expect(first.body).toEqual(again.body);
    expect(Array.isArray(first.body)).toBe(true);
    expect((await call(emulator, '/accounts/vouchers/get?phone=306999999999')).body).toEqual([]);
  });

  it('lists profiles and describes one field per custom field name', async () => {
    const list = await call(emulator, '/accounts/profiles/');
    expect(list.body).toContainEqual({ id: 1, label: 'Customers', main: true, used: true });
    const { body } = await call(emulator, '/accounts/profiles/1');
    expect(body.id).toBe('1');
    const custom = body.profileFields.filter((f: any) => f.isBusiness);
    expect(custom.map((f: any) => f.name)).toEqual(CUSTOM_FIELD_NAMES);
    expect(custom.every((f: any) => typeof f.columnNumber === 'string')).toBe(true);
    expect(custom.find((f: any) => f.name === 'loyaltyTier').options).toContainEqual({ key: 'gold', value: 'Gold' });
    expect(body.profileFields.some((f: any) => f.name === 'email' && !f.isBusiness)).toBe(true);
    expect((await call(emulator, '/accounts/profiles/99')).status).toBe(400);
  });
});
