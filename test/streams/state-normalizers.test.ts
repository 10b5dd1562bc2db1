import { describe, expect, it } from 'vitest';
import { normalizeRecords } from '../../src/pipeline/record-rows.js';
import { loyaltyStatusStream } from '../../src/streams/loyalty-status.js';
import type { StreamContext, StreamDefinition } from '../../src/streams/stream.js';
import { vouchersStream } from '../../src/streams/vouchers.js';

const ctx = { timezone: 'Europe/Athens' } as StreamContext;
const OBSERVED = '2024-11-16T08:00:00.000Z';

/** Normalizes records as a span does: rows per table, and what goes to `_etl_rejects` with its reason. */
function normalize(stream: StreamDefinition, records: unknown[]) {
  const { rows, invalid } = normalizeRecords(stream.normalizer(ctx), records, '2024-11-15', 0);
  const byTable = Object.fromEntries([...rows].map(([table, list]) => [table, list.map((r) => r.row)]));
  return { rows: byTable, rejects: invalid.map((i) => i.error.message) };
}

const answered = (answer: unknown, customerId = 'C000001') => ({
  customerId,
  observedAt: OBSERVED,
  outcome: 'answered',
  answer,
});

const loyalty = {
  program: { name: 'Loyalty Club', logo: 'NULL' },
  tier: { name: 'Silver', logo: '', order: 2, expiry: '2025-03-01 22:00:00 UTC', benefits: null },
  wallets: [
    { countryIso: 'GR', countryName: 'Greece', currency: 'EUR', point: 120.5, value: 6.025 },
    { countryIso: 'CY', countryName: null, currency: 'EUR', point: '40', value: '2' },
  ],
  // the same wallets in another order: matched by country and currency, not by position
  redeemable: [
    { countryIso: 'CY', countryName: null, currency: 'EUR', point: 40, value: 2 },
    { countryIso: 'GR', countryName: 'Greece', currency: 'EUR', point: 120, value: 6 },
  ],
  expiry: { point: 30, date: '2024-11-30' },
  toNextTier: 179.5,
  cumulativeCredit: 420.5,
  balanceDetails: [
    { loyaltyPointsGained: 100, loyaltyPointsRedeemed: 20, loyaltyPointsExpired: 80, expires: '2024-11-01 00:00:00' },
  ],
};

describe('the loyalty status normalizer', () => {
  it('turns an answer into one status row, a wallet row per country and currency, a row per expiry, and an observation', () => {
    const { rows, rejects } = normalize(loyaltyStatusStream, [answered(loyalty)]);
    expect(rejects).toEqual([]);
    expect(rows.loyalty_status).toEqual([
      {
        customer_id: 'C000001',
        program_name: 'Loyalty Club',
        program_logo: null,
        tier_name: 'Silver',
        tier_order: 2,
        tier_logo: null,
        tier_expires_at: '2025-03-01T22:00:00.000Z',
        tier_benefits: null,
        points_expiring: '30.0000',
        points_expiring_on: '2024-11-30',
        to_next_tier: '179.5000',
        cumulative_credit: '420.5000',
        observed_at: OBSERVED,
        _unlisted: null,
      },
    ]);
    expect(
      rows.loyalty_wallets!.map((w) => [w.country_iso, w.points, w.redeemable_points, w.redeemable_value]),
    ).toEqual([
      ['GR', '120.5000', '120.0000', '6.0000'],
      ['CY', '40.0000', '40.0000', '2.0000'],
    ]);
    // a zone-less instant is local time in the source's zone
    expect(rows.loyalty_balance_details).toEqual([
      {
        customer_id: 'C000001',
        expires_at: '2024-10-31T22:00:00.000Z',
        points_gained: '100.0000',
        points_redeemed: '20.0000',
        points_expired: '80.0000',
        _unlisted: null,
      },
    ]);
    expect(rows._etl_customer_observations).toEqual([
      { stream: 'loyalty_status', customer_id: 'C000001', observed_at: OBSERVED, outcome: 'answered' },
    ]);
  });

  it('keeps the members the spec does not list on the row they belong to, by their path in the answer', () => {
    const extra = {
      ...loyalty,
      segment: 'A',
      tier: { ...loyalty.tier, colour: 'silver' },
      wallets: [{ ...loyalty.wallets[0], bucket: 'main' }, loyalty.wallets[1]],
      redeemable: [loyalty.redeemable[0], { ...loyalty.redeemable[1], cap: 5 }],
      balanceDetails: [{ ...loyalty.balanceDetails[0], source: { kind: 'earn' } }],
    };
    const { rows, rejects } = normalize(loyaltyStatusStream, [answered(extra)]);
    expect(rejects).toEqual([]);
    expect(JSON.parse(String(rows.loyalty_status![0]!._unlisted))).toEqual({ segment: 'A', 'tier.colour': 'silver' });
    expect(rows.loyalty_wallets!.map((w) => (w._unlisted === null ? null : JSON.parse(String(w._unlisted))))).toEqual([
      { 'wallets[].bucket': 'main', 'redeemable[].cap': 5 },
      null,
    ]);
    expect(JSON.parse(String(rows.loyalty_balance_details![0]!._unlisted))).toEqual({
      'balanceDetails[].source': { kind: 'earn' },
    });
  });

  it('records 1005 and an unaskable customer as observations without state rows', () => {
    const { rows, rejects } = normalize(loyaltyStatusStream, [
      { customerId: 'C000002', observedAt: OBSERVED, outcome: 'not_found' },
      { customerId: 'C000003', observedAt: OBSERVED, outcome: 'unaskable' },
    ]);
    expect(rejects).toEqual([]);
    expect(rows.loyalty_status).toBeUndefined();
    expect(rows._etl_customer_observations!.map((o) => o.outcome)).toEqual(['not_found', 'unaskable']);
  });

  const hostile: Array<[string, unknown, RegExp]> = [
    ['no loyalty member', answered(undefined), /expected object/],
    [
      'a wallet without a country',
      answered({ ...loyalty, wallets: [{ currency: 'EUR', point: 1 }], redeemable: [] }),
      /wallets\.0\.countryIso: is missing/,
    ],
    [
      'a wallet twice',
      answered({ ...loyalty, wallets: [loyalty.wallets[0], loyalty.wallets[0]], redeemable: [] }),
      /a second wallet GR\/EUR/,
    ],
    [
      'a redeemable entry of no wallet',
      answered({ ...loyalty, wallets: [loyalty.wallets[0]] }),
      /wallet CY\/EUR, which wallets\[\] does not hold/,
    ],
    [
      'an expiry that is no instant',
      answered({ ...loyalty, balanceDetails: [{ ...loyalty.balanceDetails[0], expires: 'soon' }] }),
      /balanceDetails\.0\.expires/,
    ],
    [
      'a customer of no id',
      { customerId: '', observedAt: OBSERVED, outcome: 'answered', answer: loyalty },
      /customerId/,
    ],
    ['an unknown outcome', { customerId: 'C1', observedAt: OBSERVED, outcome: 'maybe' }, /outcome/],
    ['no record at all', 'DROP TABLE loyalty_status', /expected object/],
  ];
  it.each(hostile)('rejects %s, whole', (_, record, reason) => {
    const { rows, rejects } = normalize(loyaltyStatusStream, [record]);
    expect(rows).toEqual({});
    expect(rejects).toEqual([expect.stringMatching(reason)]);
  });

  // a field that is no part of a row's key costs that field alone: the answer loads, the field NULL
  const badField: Array<[string, Record<string, unknown>, string, string, string, unknown, RegExp]> = [
    [
      'points that are no number',
      { toNextTier: 'lots' },
      'loyalty_status',
      'to_next_tier',
      'toNextTier',
      'lots',
      /^toNextTier: not a number/,
    ],
    [
      'a date that is no day',
      { expiry: { point: 1, date: '2024-02-30' } },
      'loyalty_status',
      'points_expiring_on',
      'expiry.date',
      '2024-02-30',
      /^expiry\.date/,
    ],
    [
      'a tier that is no object',
      { tier: 'Gold' },
      'loyalty_status',
      'tier_name',
      'tier',
      'Gold',
      /^tier: expected an object/,
    ],
    [
      "a wallet's points that are no number",
      { wallets: [{ ...loyalty.wallets[0], point: [1] }, loyalty.wallets[1]] },
      'loyalty_wallets',
      'points',
      'wallets.0.point',
      [1],
      /^wallets\.0\.point: expected a number/,
    ],
    [
      'points gained that are no number',
      { balanceDetails: [{ ...loyalty.balanceDetails[0], loyaltyPointsGained: 'many' }] },
      'loyalty_balance_details',
      'points_gained',
      'balanceDetails.0.loyaltyPointsGained',
      'many',
      /^balanceDetails\.0\.loyaltyPointsGained: not a number/,
    ],
  ];
  it.each(badField)(
    'loads %s as NULL, keeping the answer and the raw value',
    (_, change, table, column, field, raw, reason) => {
      const { rows, rejects } = normalize(loyaltyStatusStream, [answered({ ...loyalty, ...change })]);
      const good = normalize(loyaltyStatusStream, [answered(loyalty)]).rows;
      expect(rejects).toEqual([]);
      for (const t of ['loyalty_status', 'loyalty_wallets', 'loyalty_balance_details'])
        expect(rows[t], t).toHaveLength(good[t]!.length);
      expect(rows[table]![0]![column]).toBeNull();
      const key =
        table === 'loyalty_wallets'
          ? 'C000001 GR/EUR'
          : table === 'loyalty_balance_details'
            ? `C000001 ${String(good[table]![0]!.expires_at)}`
            : 'C000001';
      expect(rows._etl_field_rejects).toEqual([
        { record_key: key, field, raw_value: JSON.stringify(raw), error: expect.stringMatching(reason) },
      ]);
    },
  );
});

const voucher = {
  title: 'Free coffee',
  icon: 'https://cdn.example.com/vouchers/coffee.png',
  code: 'V00A1B203',
  value: 3,
  valueType: 'fixed',
  expires: '2024-12-31',
  enabled: false,
  status: 'redeemed',
  redeemed: '2024-11-10 12:30:00',
  redeemedBranch: 'NULL',
};

describe('the vouchers normalizer', () => {
  it('turns a list into a row per code, first and last seen at the observation, not gone', () => {
    const { rows, rejects } = normalize(vouchersStream, [
      answered([voucher, { ...voucher, code: 'P000001', redeemed: null, status: 'active', enabled: 'true' }]),
    ]);
    expect(rejects).toEqual([]);
    expect(rows.vouchers).toEqual([
      {
        customer_id: 'C000001',
        code: 'V00A1B203',
        title: 'Free coffee',
        icon: voucher.icon,
        value: '3.0000',
        value_type: 'fixed',
        expires_on: '2024-12-31',
        enabled: 'false',
        status: 'redeemed',
        redeemed_at: '2024-11-10T10:30:00.000Z',
        redeemed_branch: null,
        first_seen_at: OBSERVED,
        last_seen_at: OBSERVED,
        gone_at: null,
        _unlisted: null,
      },
      expect.objectContaining({ code: 'P000001', enabled: 'true', redeemed_at: null }),
    ]);
  });

  it('takes an empty list as a customer holding no voucher', () => {
    const { rows, rejects } = normalize(vouchersStream, [answered([])]);
    expect(rejects).toEqual([]);
    expect(rows.vouchers ?? []).toEqual([]);
    expect(rows._etl_customer_observations).toHaveLength(1);
  });

  const hostile: Array<[string, unknown, RegExp]> = [
    ['a list that is no list', answered({ code: 'V1' }), /expected array/],
    ['a voucher without a code', answered([{ ...voucher, code: '' }]), /0\.code: is missing/],
    ['a code listed twice', answered([voucher, voucher]), /voucher V00A1B203 is listed twice/],
  ];
  // a field that is no part of the key costs that field alone: the voucher and the list load, the field NULL
  const badField: Array<[string, Record<string, unknown>, string, string, RegExp]> = [
    ['enabled that is no Boolean', { enabled: 'maybe' }, 'enabled', 'enabled', /^enabled: expected true or false/],
    [
      'a redemption that is no instant',
      { redeemed: "'; DROP TABLE vouchers; --" },
      'redeemed',
      'redeemed_at',
      /^redeemed: not a timestamp/,
    ],
    ['a value that is no number', { value: { amount: 3 } }, 'value', 'value', /^value/],
  ];
  it.each(badField)(
    'loads %s as NULL, keeping the voucher, its list and the raw value',
    (_, change, field, column, reason) => {
      const other = { ...voucher, code: 'P000001' };
      const { rows, rejects } = normalize(vouchersStream, [answered([{ ...voucher, ...change }, other])]);
      expect(rejects).toEqual([]);
      expect(rows.vouchers).toHaveLength(2);
      expect(rows.vouchers![0]).toMatchObject({ code: 'V00A1B203', [column]: null });
      expect(rows._etl_field_rejects).toEqual([
        {
          record_key: 'C000001 V00A1B203',
          field,
          raw_value: JSON.stringify(change[field]),
          error: expect.stringMatching(reason),
        },
      ]);
    },
  );
  it.each(hostile)('rejects %s, with the whole list', (_, record, reason) => {
    const { rows, rejects } = normalize(vouchersStream, [record]);
    expect(rows).toEqual({});
    expect(rejects).toEqual([expect.stringMatching(reason)]);
  });
});
