import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Emulator, TruthCustomer } from '../../src/emulator/index.js';
import { LAST_DAY, call, start } from './emulator-fixture.js';

type Json = Record<string, any>;

let serial = 0;
/** A receipt or reference number never used before in this file. */
const fresh = (prefix: string) => `${prefix}-${++serial}`;

/** A copy of `body` with the member at `path` (dots; list positions as numbers) set, or deleted when `value` is undefined. */
function withValue(body: Json, path: string, value: unknown): Json {
  const copy = structuredClone(body);
  const keys = path.split('.');
  let node: any = copy;
  for (const key of keys.slice(0, -1)) node = node[key];
  if (value === undefined) delete node[keys.at(-1)!];
  else node[keys.at(-1)!] = value;
  return copy;
}
const without = (body: Json, path: string) => withValue(body, path, undefined);

/**
 * A transaction whose totals follow the spec's four rules: 2 × 3.50 + 1 × 2.00 + extras 1.00 + item tax
 * 2 × 0.24 + 0.24 = billed 10.72; item discount 2 × 0.25 = 0.50; paid 10.72 - 0.50 = 10.22.
 */
function transaction(identityKey: 'account' | 'customer', identity: Json, receipt = fresh('R')): Json {
  return {
    [identityKey]: identity,
    receipt,
    openTime: '2024-11-16 10:00:00',
    closeTime: '2024-11-16 10:05:00',
    operatorId: 'OP-1',
    deviceName: 'POS-01',
    billed: 10.72,
    paid: 10.22,
    redeemed: 0,
    billDiscount: 0,
    itemDiscountTotal: 0.5,
    billTax: 0,
    itemTaxTotal: 0.72,
    customProperties: [{ key: 'table', value: '12' }],
    items: [
      {
        sku: 'ESP',
        name: 'Espresso',
        qty: 2,
        unitPrice: 3.5,
        tax: 0.24,
        discount: { name: 'happy hour', amount: 0.25 },
      },
      { sku: 'CRO', name: 'Croissant', qty: 1, unitPrice: 2, tax: 0.24 },
    ],
    payments: [
      { name: 'EUR', typeName: 'card', amount: 10.22, date: '2024-11-16 10:05:00', redemption: false, voucher: false },
    ],
    extras: [{ name: 'delivery', amount: 1 }],
  };
}

function appointment(identity: Json, referenceNumber = fresh('A')): Json {
  return {
    account: identity,
    referenceNumber,
    generated: '2024-11-16 09:00:00',
    start: '2024-11-18 10:00:00',
    end: '2024-11-18 11:00:00',
    status: 1,
    items: [{ sku: 'CUT', name: 'Haircut', price: 20, duration: 60, consultantName: 'Eleni K.' }],
  };
}

const pageView = (): Json => ({
  customer: { phone: '306900000001' },
  items: [{ type: 'Product', sku: 'ESP', qty: '1', name: 'Espresso', unitPrice: '3.50' }],
  ecommerce: { time: '1731747600000', sourceUrl: 'https://shop.example.com/espresso' },
});

describe('write endpoints: every validation rule, with a passing and a failing body', () => {
  let emulator: Emulator;
  let customer: TruthCustomer;
  let other: TruthCustomer;
  let account: Json;
  beforeAll(async () => {
    emulator = await start({ clock: () => Date.parse('2024-11-16T08:00:00Z') });
    const customers = [...emulator.truth.customers(LAST_DAY)].filter((c) => c.phone && c.email);
    customer = customers[0]!;
    other = customers[1]!;
    account = { phone: customer.phone, first: 'Maria' };
  });
  afterAll(() => emulator.close());

  const send = (path: string, body: unknown, method = 'POST') =>
    call(emulator, path, { method, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

  /** Posts the passing body (200 `{"status":"success"}`), then the failing one (the code, naming `fields`). */
  async function rule(path: string, pass: Json, fail: Json, code: number, fields: string, method = 'POST') {
    const ok = await send(path, pass, method);
    expect(ok, `passing body of ${path}`).toEqual({ status: 200, body: { status: 'success' } });
    const bad = await send(path, fail, method);
    expect(bad.body.code, `failing body of ${path}: ${JSON.stringify(bad.body)}`).toBe(code);
    expect(bad.status).toBe({ 1002: 400, 1004: 409, 1005: 404, 1006: 400, 1010: 400 }[code]);
    expect(bad.body.message).toBe(
      `${{ 1002: 'Fields are empty', 1004: 'The following field is not unique', 1005: 'Data Not Found', 1006: 'The following fields are invalid', 1010: 'At least one of the following fields is required' }[code]}${code === 1005 ? '' : `: ${fields}`}`,
    );
  }

  describe('6 transaction, 7 rollback and 14 purchase', () => {
    const kinds = [
      { name: 'transaction', path: '/accounts/transactions/submit', body: () => transaction('account', account) },
      { name: 'rollback', path: '/accounts/transactions/rollback', body: () => transaction('customer', account) },
      {
        name: 'purchase',
        path: '/ecommactivity/purchase',
        body: () => ({ ...transaction('customer', account), ecommerce: { time: '1731747600000' } }),
      },
    ];
    /** A rollback names an accepted sale: submit one for every rollback body first. */
    async function prepared(kind: (typeof kinds)[number], body: Json): Promise<Json> {
      if (kind.name === 'rollback' && typeof body.receipt === 'string' && body.receipt !== '') {
        expect(
          (await send('/accounts/transactions/submit', transaction('account', account, body.receipt))).status,
        ).toBe(200);
      }
      return body;
    }
    const cases: Array<[string, (b: Json) => Json, (b: Json) => Json, number, string]> = [
      ['required members (1002)', (b) => b, (b) => without(without(b, 'receipt'), 'billTax'), 1002, 'receipt, billTax'],
      [
        'empty counts as missing (1002)',
        (b) => b,
        (b) => withValue(withValue(b, 'openTime', ''), 'paid', null),
        1002,
        'openTime, paid',
      ],
      ['items required and not empty (1002)', (b) => b, (b) => withValue(b, 'items', []), 1002, 'items'],
      [
        'payments and extras required, may be empty (1002)',
        (b) => withValue(withValue(withValue(b, 'extras', []), 'billed', 9.72), 'paid', 9.22),
        (b) => without(without(b, 'payments'), 'extras'),
        1002,
        'payments, extras',
      ],
      [
        'item sku, qty, unitPrice required (1002)',
        (b) => without(b, 'items.0.discount.name'),
        (b) => without(without(b, 'items.1.sku'), 'items.0.unitPrice'),
        1002,
        'items[0].unitPrice, items[1].sku',
      ],
      [
        'a voucher payment needs its referenceId (1002)',
        (b) => withValue(b, 'payments', [{ name: 'EUR', typeName: 'card', amount: 10.22, voucher: false }]),
        (b) => withValue(b, 'payments', [{ name: 'Gift', typeName: 'voucher', amount: 10.22, voucher: true }]),
        1002,
        'payments[0].referenceId',
      ],
      [
        'times are YYYY-MM-DD HH:MM:SS (1006)',
        (b) => b,
        (b) => withValue(withValue(b, 'openTime', '16/11/2024 10:00'), 'closeTime', '2024-11-16 25:00:00'),
        1006,
        'openTime, closeTime',
      ],
      ['totals are Decimals (1006)', (b) => b, (b) => withValue(b, 'billTax', '0'), 1006, 'billTax'],
      [
        'strings are Strings (1006)',
        (b) => b,
        (b) => withValue(withValue(b, 'receipt', 42), 'operatorId', 7),
        1006,
        'receipt, operatorId',
      ],
      [
        'item members are typed (1006)',
        (b) => b,
        (b) => withValue(withValue(b, 'items.0.qty', '2'), 'items.1.tax', true),
        1006,
        'items[0].qty, items[1].tax',
      ],
      [
        'payment flags are Booleans (1006)',
        (b) => b,
        (b) => withValue(b, 'payments.0.redemption', 'no'),
        1006,
        'payments[0].redemption',
      ],
      [
        'the identity block is Strings (1006)',
        (b) => b,
        (b) => withValue(b, `${Object.keys(b)[0]}.phone`, Number(customer.phone)),
        1006,
        `${'IDENTITY'}.phone`,
      ],
      [
        'voucher.* and loyalty.* are typed when given (1006)',
        (b) => ({ ...b, loyalty: { name: true, amount: 0, redemption: false } }),
        (b) => ({ ...b, loyalty: { amount: '1' }, voucher: { name: 'x' } }),
        1006,
        'voucher.name, loyalty.amount',
      ],
      [
        'itemTaxTotal = Σ tax × qty, to the cent (1006)',
        (b) => withValue(withValue(b, 'itemTaxTotal', 0.724), 'billed', 10.724),
        (b) => withValue(withValue(b, 'itemTaxTotal', 0.73), 'billed', 10.73),
        1006,
        'itemTaxTotal, paid',
      ],
      [
        'itemDiscountTotal = Σ discount.amount × qty (1006)',
        (b) => b,
        (b) => withValue(withValue(b, 'itemDiscountTotal', 0.25), 'paid', 10.47),
        1006,
        'itemDiscountTotal',
      ],
      [
        'billed = Σ unitPrice × qty + extras + billTax + itemTaxTotal (1006)',
        (b) => withValue(withValue(withValue(b, 'billTax', 1), 'billed', 11.72), 'paid', 11.22),
        (b) => withValue(b, 'billTax', 1),
        1006,
        'billed',
      ],
      [
        'paid = billed - billDiscount - itemDiscountTotal - redeemed (1006)',
        (b) => withValue(withValue(b, 'billDiscount', 0.22), 'paid', 10),
        (b) => withValue(b, 'paid', 10.23),
        1006,
        'paid',
      ],
    ];
    for (const kind of kinds) {
      for (const [ruleName, pass, fail, code, fields] of cases) {
        it(`${kind.name}: ${ruleName}`, async () => {
          const identityKey = kind.name === 'transaction' ? 'account' : 'customer';
          const passing = await prepared(kind, pass(kind.body()));
          const failing = await prepared(kind, fail(kind.body()));
          await rule(kind.path, passing, failing, code, fields.replace('IDENTITY', identityKey));
        });
      }
    }

    it('purchase: the ecommerce block with its time is required, and Strings (1002, 1006)', async () => {
      const purchase = () => ({
        ...transaction('customer', account),
        ecommerce: { time: '1731747600000', custom: { fbp: 'fb.1' } },
      });
      await rule('/ecommactivity/purchase', purchase(), without(purchase(), 'ecommerce'), 1002, 'ecommerce');
      await rule('/ecommactivity/purchase', purchase(), without(purchase(), 'ecommerce.time'), 1002, 'ecommerce.time');
      await rule(
        '/ecommactivity/purchase',
        purchase(),
        withValue(purchase(), 'ecommerce.time', 1731747600000),
        1006,
        'ecommerce.time',
      );
    });

    it('a receipt is accepted once across transactions and purchases (1004)', async () => {
      const receipt = fresh('R');
      await rule(
        '/accounts/transactions/submit',
        transaction('account', account, receipt),
        transaction('account', account, receipt),
        1004,
        'receipt',
      );
      await rule(
        '/ecommactivity/purchase',
        { ...transaction('customer', account), ecommerce: { time: '1' } },
        { ...transaction('customer', account, receipt), ecommerce: { time: '1' } },
        1004,
        'receipt',
      );
    });

    it('a rollback names an accepted receipt (1006), once (1004)', async () => {
      const receipt = fresh('R');
      expect((await send('/accounts/transactions/submit', transaction('account', account, receipt))).status).toBe(200);
      await rule(
        '/accounts/transactions/rollback',
        transaction('customer', account, receipt),
        transaction('customer', account, fresh('NEVER')),
        1006,
        'receipt',
      );
      const again = await send('/accounts/transactions/rollback', transaction('customer', account, receipt));
      expect(again.status).toBe(409);
      expect(again.body).toEqual({ code: 1004, message: 'The following field is not unique: receipt' });
    });

    it('a redemption needs the points on the balance (1006 redeemed)', async () => {
      const { body } = await call(emulator, `/accounts?phone=${customer.phone}&includeLoyalty=true`);
      const balance: number = body.loyalty.wallets[0].point;
      expect(balance).toBeGreaterThan(20); // the sales above earned points
      const redeem = (money: number) => ({
        ...transaction('account', account),
        redeemed: money,
        paid: Math.round((10.22 - money) * 100) / 100,
        payments: [{ name: 'points', typeName: 'loyalty', amount: money, redemption: true, voucher: false }],
      });
      const allOfIt = Math.floor(balance * 5) / 100; // the balance's worth in money, to the cent below
      // After the passing body (20 points debited, fewer credited) the failing one asks 20 points more than there were.
      await rule(
        '/accounts/transactions/submit',
        redeem(1),
        redeem(Math.round((allOfIt + 1) * 100) / 100),
        1006,
        'redeemed',
      );
      const anonymous = { ...redeem(0.5), account: { phone: '306999999999' } };
      expect((await send('/accounts/transactions/submit', anonymous)).body).toEqual({
        code: 1006,
        message: 'The following fields are invalid: redeemed',
      });
    });
  });

  describe('8 appointment', () => {
    const path = '/accounts/appointments/submit';
    it('requires account, referenceNumber, start, end, status, items and each item’s sku, name, price, duration (1002)', async () => {
      await rule(
        path,
        appointment(account),
        without(without(without(appointment(account), 'account'), 'status'), 'items'),
        1002,
        'account, status, items',
      );
      await rule(
        path,
        appointment(account),
        withValue(withValue(appointment(account), 'referenceNumber', ''), 'end', null),
        1002,
        'referenceNumber, end',
      );
      await rule(
        path,
        appointment(account),
        withValue(appointment(account), 'items', [{ consultantId: 'c1' }]),
        1002,
        'items[0].sku, items[0].name, items[0].price, items[0].duration',
      );
    });
    it('types its members (1006)', async () => {
      await rule(
        path,
        appointment(account),
        withValue(withValue(appointment(account), 'start', '2024-11-18T10:00:00'), 'status', '1'),
        1006,
        'start, status',
      );
      await rule(
        path,
        appointment(account),
        withValue(withValue(appointment(account), 'items.0.price', '20'), 'generated', 'today'),
        1006,
        'generated, items[0].price',
      );
    });
    it('updates by reference number; a reference number of another customer is not unique (1004)', async () => {
      const reference = fresh('A');
      await rule(
        path,
        appointment(account, reference),
        appointment({ phone: other.phone }, reference),
        1004,
        'referenceNumber',
      );
      const update = withValue(appointment(account, reference), 'status', 2);
      expect((await send(path, update)).body).toEqual({ status: 'success' });
      const counts = await call(emulator, '/_emulator/activity');
      expect(counts.body.appointments).toBeGreaterThan(0);
    });
  });

  describe('15 product view', () => {
    const path = '/ecommactivity/pageview';
    it('requires items with type, sku, qty, name, and ecommerce.time (1002)', async () => {
      await rule(path, without(pageView(), 'customer'), without(pageView(), 'items'), 1002, 'items');
      await rule(
        path,
        pageView(),
        without(without(without(pageView(), 'items.0.qty'), 'items.0.name'), 'ecommerce.time'),
        1002,
        'items[0].qty, items[0].name, ecommerce.time',
      );
      await rule(
        path,
        pageView(),
        withValue(pageView(), 'items.0', { currency: 'EUR' }),
        1002,
        'items[0].type, items[0].sku, items[0].qty, items[0].name',
      );
    });
    it('has only String members (1006) and a type of Product or Service (1006)', async () => {
      await rule(
        path,
        pageView(),
        withValue(withValue(pageView(), 'items.0.qty', 1), 'customer.email', false),
        1006,
        'customer.email, items[0].qty',
      );
      await rule(
        path,
        withValue(pageView(), 'items.0.type', 'Service'),
        withValue(pageView(), 'items.0.type', 'Gadget'),
        1006,
        'items[0].type',
      );
    });
  });

  describe('4 modify', () => {
    const path = '/accounts/update';
    it('needs a phone or an e-mail, in the query or the body (1010)', async () => {
      await rule(path, { email: customer.email, city: 'Patra' }, { first: 'Maria' }, 1010, 'phone, email', 'PUT');
      expect(
        (await call(emulator, `${path}?phone=${customer.phone}`, { method: 'PUT', body: '{"first":"Maria"}' })).body,
      ).toEqual({ status: 'success' });
    });
    it('types its members (1006)', async () => {
      await rule(
        path,
        { phone: customer.phone, birthdate: '1990-02-28', city: null },
        { phone: customer.phone, birthdate: '1990-02-30', city: 5 },
        1006,
        'birthdate, city',
        'PUT',
      );
      await rule(
        path,
        { phone: customer.phone, businessFields: { pet: 'cat', hobby: null } },
        { phone: customer.phone, businessFields: { pet: 1 } },
        1006,
        'businessFields',
        'PUT',
      );
    });
    it('answers 1004 when an identifier belongs to another customer, 1005 for an unknown one', async () => {
      await rule(
        path,
        { phone: customer.phone, accountId: customer.customer_id },
        { phone: customer.phone, accountId: other.customer_id },
        1004,
        'accountId',
        'PUT',
      );
      await rule(
        path,
        { phone: customer.phone, email: customer.email },
        { phone: customer.phone, email: other.email },
        1004,
        'email',
        'PUT',
      );
      await rule(path, { phone: customer.phone }, { phone: '306999999999' }, 1005, '', 'PUT');
    });
  });

  it('answers 400 to a body that is not a JSON object', async () => {
    expect((await call(emulator, '/accounts/update', { method: 'PUT', body: 'not json' })).body.code).toBe(400);
    expect((await send('/accounts/transactions/submit', [1, 2])).body.code).toBe(400);
  });
});
