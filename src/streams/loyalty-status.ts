import { z } from 'zod';
import { UNLISTED_COLUMN, type HistorySpec, type Row, type TableSpec } from '../load/table-spec.js';
import { RecordError } from '../transform/record-error.js';
import { parseSourceDate, parseSourceTimestamp } from '../transform/timestamps.js';
import { UNLISTED, unlistedJson, unlistedMembers, type UnlistedMember } from '../transform/unlisted.js';
import { cleanDecimal, cleanInteger, cleanText } from '../transform/values.js';
import { customerObservationsTable, customerStateStream } from './customer-state-stream.js';
import type { NormalizedRecord } from './stream.js';
import { zodProblem } from './zod-problem.js';

const text = z.union([z.string(), z.number(), z.null()]).optional();
const num = z.union([z.number(), z.string(), z.null()]).optional();
const wallet = z.looseObject({ countryIso: text, countryName: text, currency: text, point: num, value: num });
const program = z.looseObject({ name: text, logo: text });
const tier = z.looseObject({ name: text, logo: text, order: num, expiry: z.string().nullish(), benefits: text });
const expiry = z.looseObject({ point: num, date: z.string().nullish() });
const balanceDetail = z.looseObject({
  loyaltyPointsGained: num,
  loyaltyPointsRedeemed: num,
  loyaltyPointsExpired: num,
  expires: z.string(),
});

/** The `loyalty` member of `GET /accounts?includeLoyalty=true`. */
const loyaltySchema = z.looseObject({
  program: program.nullish(),
  tier: tier.nullish(),
  wallets: z.array(wallet).nullish(),
  redeemable: z.array(wallet).nullish(),
  expiry: expiry.nullish(),
  toNextTier: num,
  cumulativeCredit: num,
  balanceDetails: z.array(balanceDetail).nullish(),
});

/** The members the spec lists, per object of the answer. */
const listed = (schema: { shape: object }): ReadonlySet<string> => new Set(Object.keys(schema.shape));
export const LOYALTY_MEMBERS = listed(loyaltySchema);
const PROGRAM_MEMBERS = listed(program);
const TIER_MEMBERS = listed(tier);
const EXPIRY_MEMBERS = listed(expiry);
const WALLET_MEMBERS = listed(wallet);
const DETAIL_MEMBERS = listed(balanceDetail);

/** Rows of the customers asked replace theirs: a customer's state is what the service said last. */
const replaceAsked = { kind: 'customer-state', askedIn: customerObservationsTable.name } as const;

/**
 * A customer's answer holds all of its status, wallets and expiries: a wallet or an expiry it no longer lists ended
 * when the customer was asked. The three histories share the log of when each customer was asked.
 */
const customerScope = {
  columns: ['customer_id'],
  observedIn: customerObservationsTable.name,
  observations: '_etl_loyalty_status_asked',
};

/** A version per change observed: the instant the customer was asked starts it (`observed_at`). */
function historyOf(table: string): HistorySpec {
  return {
    table: `${table}_history`,
    observations: `_etl_${table}_observations`,
    observedAt: 'observed_at',
    scope: customerScope,
  };
}

export const loyaltyStatusTable: TableSpec = {
  name: 'loyalty_status',
  history: historyOf('loyalty_status'),
  key: ['customer_id'],
  merge: replaceAsked,
  columns: [
    { name: 'customer_id', type: 'text' },
    { name: 'program_name', type: 'text' },
    { name: 'program_logo', type: 'text' },
    { name: 'tier_name', type: 'text' },
    { name: 'tier_order', type: 'integer' },
    { name: 'tier_logo', type: 'text' },
    { name: 'tier_expires_at', type: 'timestamptz' },
    { name: 'tier_benefits', type: 'text' },
    { name: 'points_expiring', type: 'decimal' },
    { name: 'points_expiring_on', type: 'date' },
    { name: 'to_next_tier', type: 'decimal' },
    { name: 'cumulative_credit', type: 'decimal' },
    { name: 'observed_at', type: 'timestamptz' },
    UNLISTED_COLUMN,
  ],
  recordType: 'loyalty',
};

export const loyaltyWalletsTable: TableSpec = {
  name: 'loyalty_wallets',
  history: historyOf('loyalty_wallets'),
  key: ['customer_id', 'country_iso', 'currency'],
  merge: replaceAsked,
  columns: [
    { name: 'customer_id', type: 'text' },
    { name: 'country_iso', type: 'text' },
    { name: 'country_name', type: 'text' },
    { name: 'currency', type: 'text' },
    { name: 'points', type: 'decimal' },
    { name: 'value', type: 'decimal' },
    { name: 'redeemable_points', type: 'decimal' },
    { name: 'redeemable_value', type: 'decimal' },
    UNLISTED_COLUMN,
  ],
  recordType: 'loyalty',
};

export const loyaltyBalanceDetailsTable: TableSpec = {
  name: 'loyalty_balance_details',
  history: historyOf('loyalty_balance_details'),
  key: ['customer_id', 'expires_at'],
  merge: replaceAsked,
  columns: [
    { name: 'customer_id', type: 'text' },
    { name: 'expires_at', type: 'timestamptz' },
    { name: 'points_gained', type: 'decimal' },
    { name: 'points_redeemed', type: 'decimal' },
    { name: 'points_expired', type: 'decimal' },
    UNLISTED_COLUMN,
  ],
  recordType: 'loyalty',
};

/** A wallet's key text, for messages and matching: `GR/EUR`. */
function walletKey(iso: string, currency: string): string {
  return `${iso}/${currency}`;
}

/**
 * A customer's loyalty answer as rows: one `loyalty_status` row, a `loyalty_wallets` row per wallet (its
 * `redeemable[]` entry matched by country and currency, not by position), a `loyalty_balance_details` row per
 * expiry. A wallet without country or currency, two wallets or expiries with the same key, or a redeemable entry
 * of no wallet make the whole answer a reject.
 */
export function loyaltyStatusRows(
  customerId: string,
  answer: unknown,
  observedAt: string,
  timezone: string,
): NormalizedRecord {
  const parsed = loyaltySchema.safeParse(answer);
  if (!parsed.success) throw new RecordError('', zodProblem(parsed.error).replace(/^record:/, 'loyalty:'));
  const l = parsed.data;
  return {
    loyalty_status: [statusRow(customerId, l, observedAt, timezone)],
    loyalty_wallets: walletRows(customerId, l),
    loyalty_balance_details: detailRows(customerId, l, timezone),
  };
}

type Loyalty = z.infer<typeof loyaltySchema>;

function statusRow(customerId: string, l: Loyalty, observedAt: string, timezone: string): Row {
  const expiryDate =
    l.expiry?.date == null || cleanText(l.expiry.date) === null ? null : parseSourceDate(l.expiry.date, 'expiry.date');
  const tierExpiry =
    l.tier?.expiry == null || cleanText(l.tier.expiry) === null
      ? null
      : parseSourceTimestamp(l.tier.expiry, timezone, 'tier.expiry');
  return {
    customer_id: customerId,
    program_name: cleanText(l.program?.name, 'program.name'),
    program_logo: cleanText(l.program?.logo, 'program.logo'),
    tier_name: cleanText(l.tier?.name, 'tier.name'),
    tier_order: cleanInteger(l.tier?.order, 'tier.order'),
    tier_logo: cleanText(l.tier?.logo, 'tier.logo'),
    tier_expires_at: tierExpiry,
    tier_benefits: cleanText(l.tier?.benefits, 'tier.benefits'),
    points_expiring: cleanDecimal(l.expiry?.point, 'expiry.point'),
    points_expiring_on: expiryDate,
    to_next_tier: cleanDecimal(l.toNextTier, 'toNextTier'),
    cumulative_credit: cleanDecimal(l.cumulativeCredit, 'cumulativeCredit'),
    observed_at: observedAt,
    // members of the answer, its program, tier and expiry; those of wallets and expiries go on their own rows
    [UNLISTED]: unlistedJson([
      ...unlistedMembers(l, LOYALTY_MEMBERS),
      ...unlistedMembers(l.program, PROGRAM_MEMBERS, 'program.'),
      ...unlistedMembers(l.tier, TIER_MEMBERS, 'tier.'),
      ...unlistedMembers(l.expiry, EXPIRY_MEMBERS, 'expiry.'),
    ]),
  };
}

/** A row per wallet, with the `redeemable[]` entry of its country and currency; an entry of no wallet is a reject. */
function walletRows(customerId: string, l: Loyalty): Row[] {
  const redeemable = new Map<string, { points: string | null; value: string | null; unlisted: UnlistedMember[] }>();
  for (const [i, r] of (l.redeemable ?? []).entries()) {
    const key = walletKey(
      required(r.countryIso, `redeemable.${i}.countryIso`),
      required(r.currency, `redeemable.${i}.currency`),
    );
    if (redeemable.has(key)) throw new RecordError(`redeemable.${i}`, `a second redeemable entry of wallet ${key}`);
    redeemable.set(key, {
      points: cleanDecimal(r.point, `redeemable.${i}.point`),
      value: cleanDecimal(r.value, `redeemable.${i}.value`),
      unlisted: unlistedMembers(r, WALLET_MEMBERS, 'redeemable[].'),
    });
  }
  const wallets = (l.wallets ?? []).map((w, i) => {
    const iso = required(w.countryIso, `wallets.${i}.countryIso`);
    const currency = required(w.currency, `wallets.${i}.currency`);
    const r = redeemable.get(walletKey(iso, currency));
    redeemable.delete(walletKey(iso, currency));
    return {
      customer_id: customerId,
      country_iso: iso,
      country_name: cleanText(w.countryName, `wallets.${i}.countryName`),
      currency,
      points: cleanDecimal(w.point, `wallets.${i}.point`),
      value: cleanDecimal(w.value, `wallets.${i}.value`),
      redeemable_points: r?.points ?? null,
      redeemable_value: r?.value ?? null,
      [UNLISTED]: unlistedJson([...unlistedMembers(w, WALLET_MEMBERS, 'wallets[].'), ...(r?.unlisted ?? [])]),
    };
  });
  unique(
    wallets.map((w) => walletKey(w.country_iso, w.currency)),
    'wallets',
    'wallet',
  );
  const orphan = [...redeemable.keys()][0];
  if (orphan !== undefined)
    throw new RecordError('redeemable', `an entry of wallet ${orphan}, which wallets[] does not hold`);
  return wallets;
}

function detailRows(customerId: string, l: Loyalty, timezone: string): Row[] {
  const details = (l.balanceDetails ?? []).map((d, i) => ({
    customer_id: customerId,
    expires_at: parseSourceTimestamp(d.expires, timezone, `balanceDetails.${i}.expires`),
    points_gained: cleanDecimal(d.loyaltyPointsGained, `balanceDetails.${i}.loyaltyPointsGained`),
    points_redeemed: cleanDecimal(d.loyaltyPointsRedeemed, `balanceDetails.${i}.loyaltyPointsRedeemed`),
    points_expired: cleanDecimal(d.loyaltyPointsExpired, `balanceDetails.${i}.loyaltyPointsExpired`),
    [UNLISTED]: unlistedJson(unlistedMembers(d, DETAIL_MEMBERS, 'balanceDetails[].')),
  }));
  unique(
    details.map((d) => d.expires_at),
    'balanceDetails',
    'expiry',
  );
  return details;
}

function required(value: unknown, field: string): string {
  const t = cleanText(value, field);
  if (t === null) throw new RecordError(field, 'is missing');
  return t;
}

function unique(keys: string[], field: string, what: string): void {
  const seen = new Set<string>();
  for (const [i, key] of keys.entries()) {
    if (seen.has(key)) throw new RecordError(`${field}.${i}`, `a second ${what} ${key}`);
    seen.add(key);
  }
}

/**
 * The loyalty status stream: each selected customer's `GET /accounts?includeLoyalty=true` — program, tier,
 * wallets per country and currency, points expiring, balance details — as the service reports it today.
 */
export const loyaltyStatusStream = customerStateStream({
  name: 'loyalty_status',
  what: 'loyalty',
  tables: [loyaltyStatusTable, loyaltyWalletsTable, loyaltyBalanceDetailsTable],
  ask: (api, customer) => api.loyaltyOf(customer),
  rows: loyaltyStatusRows,
});
