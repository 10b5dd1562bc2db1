import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Emulator } from '../../src/emulator/index.js';
import { call, start } from './emulator-fixture.js';

/** A transaction whose totals follow the spec's rules: 2 × 3.50 + 1 × 2.00, tax 0.24 each, 0.50 off. */
function transaction(receipt: string, overrides: Record<string, unknown> = {}) {
  return {
    account: { phone: '306900000001' },
    receipt,
    openTime: '2024-09-01 10:00:00',
    closeTime: '2024-09-01 10:05:00',
    billed: 10.72, // 7 + 2 + extras 1 + billTax 0 + itemTaxTotal 0.72
    paid: 9.72, // billed - billDiscount 0 - itemDiscountTotal 0.5 - redeemed 0.5
    redeemed: 0.5,
    billDiscount: 0,
    itemDiscountTotal: 0.5,
    billTax: 0,
    itemTaxTotal: 0.72,
    items: [
      { sku: 'ESP', qty: 2, unitPrice: 3.5, tax: 0.24, discount: { amount: 0.25 } },
      { sku: 'CRO', qty: 1, unitPrice: 2, tax: 0.24 },
    ],
    payments: [{ name: 'EUR', typeName: 'card', amount: 9.72 }],
    extras: [{ name: 'delivery', amount: 1 }],
    ...overrides,
  };
}

describe('write endpoints', () => {
  let emulator: Emulator;
  beforeAll(async () => {
    emulator = await start();
  });
  afterAll(() => emulator.close());

  const post = (path: string, body: unknown, method = 'POST') =>
    call(emulator, path, { method, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

  it('accepts a consistent transaction once, then answers 1004 for its receipt', async () => {
    expect(await post('/accounts/transactions/submit', transaction('R-1'))).toEqual({ status: 200, body: { status: 'success' } });
    const again = await post('/accounts/transactions/submit', transaction('R-1'));
    expect(again.status).toBe(409);
    expect(again.body.code).toBe(1004);
  });

  it('answers 1006 naming the totals that do not add up', async () => {
    const { status, body } = await post('/accounts/transactions/submit', transaction('R-2', { billed: 11, paid: 10 }));
    expect(status).toBe(400);
    expect(body.code).toBe(1006);
    expect(body.message).toContain('billed');
    expect((await post('/ecommactivity/purchase', transaction('R-3', { itemTaxTotal: 0.5, ecommerce: { time: '1725184800000' } }))).body.code).toBe(1006);
  });

  it('answers 1002 for empty required fields', async () => {
    const { status, body } = await post('/accounts/transactions/rollback', transaction('', { items: [] }));
    expect(status).toBe(400);
    expect(body).toEqual({ code: 1002, message: 'Fields are empty: receipt, items' });
    expect((await post('/ecommactivity/purchase', transaction('R-4'))).body.code).toBe(1002); // no ecommerce.time
  });

  it('validates appointments, page views and profile updates', async () => {
    const appointment = { account: { phone: '306900000001' }, referenceNumber: 'A-1', start: '2024-09-01 10:00:00', end: '2024-09-01 11:00:00', status: 1, items: [{ sku: 'CUT', name: 'Haircut', price: 20, duration: 60 }] };
    expect((await post('/accounts/appointments/submit', appointment)).status).toBe(200);
    expect((await post('/accounts/appointments/submit', { ...appointment, start: '01/09/2024 10:00' })).body.code).toBe(1006);
    const view = { items: [{ type: 'Product', sku: 'ESP', qty: '1', name: 'Espresso' }], ecommerce: { time: '1725184800000' } };
    expect((await post('/ecommactivity/pageview', view)).status).toBe(200);
    expect((await post('/ecommactivity/pageview', { ...view, items: [{ ...view.items[0], type: 'Gadget' }] })).body.code).toBe(1006);
    expect((await post('/accounts/update', { first: 'Maria' }, 'PUT')).body.code).toBe(1010);
    expect((await call(emulator, '/accounts/update?phone=306900000001', { method: 'PUT', body: '{"first":"Maria"}' })).status).toBe(200);
    expect((await call(emulator, '/accounts/update', { method: 'PUT', body: 'not json' })).status).toBe(400);
  });
});
