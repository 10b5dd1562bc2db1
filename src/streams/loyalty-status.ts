import { z } from 'zod';
import { UNLISTED_COLUMN, type HistorySpec, type Row, type TableSpec } from '../load/table-spec.js';
import { FIELD_REJECTS, LenientFields, type FieldRejectRow } from '../transform/field-problems.js';
import { RecordError } from '../transform/record-error.js';
import { parseSourceTimestamp } from '../transform/timestamps.js';
import { UNLISTED, unlistedJson, unlistedMembers, type UnlistedMember } from '../transform/unlisted.js';
import { cleanText } from '../transform/values.js';
import { customerObservationsTable, customerStateStream } from './customer-state-stream.js';
import type { NormalizedRecord } from './stream.js';
import { zodProblem } from './zod-problem.js';

const text = z.unknown().optional();
const num = z.unknown().optional();
const wallet = z.looseObject({ countryIso: text, countryName: text, currency: text, point: num, value: num });
const program = z.looseObject({ name: text, logo: text });
const tier = z.looseObject({ name: text, logo: text, order: num, expiry: text, benefits: text });
const expiry = z.looseObject({ point: num, date: text });
const balanceDetail = z.looseObject({
  loyaltyPointsGained: num,
  loyaltyPointsRedeemed: num,
  loyaltyPointsExpired: num,
  expires: z.string(),
});

/**
 * The `loyalty` member of `GET /accounts?includeLoyalty=true`. Only its lists are checked here: their elements are
 * rows keyed by a wallet's country and currency or an expiry's instant, and a list cut short would end the rows
 * left out. Every other member is read one by one, leniently (see `loyaltyStatusRows`).
 */
const loyaltySchema = z.looseObject({
  program: z.unknown().optional(),
  tier: z.unknown().optional(),
  wallets: z.array(wallet).nullish(),
  redeemable: z.array(wallet).nullish(),
  expiry: z.unknown().optional(),
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
 * expiry. A wallet without country or currency, an expiry without its instant, two wallets or expiries with the same
 * key, or a redeemable entry of no wallet make the whole answer a reject. Any other field that cannot be read loads
 * as NULL and is kept in `_etl_field_rejects` under its row's key (the customer, `C1 GR/EUR`, `C1 <expiry>`).
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
  const problems: FieldRejectRow[] = [];
  const out: NormalizedRecord = {
    loyalty_status: [statusRow(customerId, l, observedAt, timezone, problems)],
    loyalty_wallets: walletRows(customerId, l, problems),
    loyalty_balance_details: detailRows(customerId, l, timezone, problems),
  };
  if (problems.length > 0) out[FIELD_REJECTS] = problems;
  return out;
}

type Loyalty = z.infer<typeof loyaltySchema>;

/** The members of one object of the answer (`program`, `tier`, `expiry`): none when it is no object, said once. */
function part(fields: LenientFields, name: string, value: unknown): Record<string, unknown> | undefined {
  if (value === null || value === undefined) return undefined;
  if (typeof value === 'object' && !Array.isArray(value)) return value as Record<string, unknown>;
  fields.read(name, value, () => {
    throw new RecordError(name, `expected an object, got ${Array.isArray(value) ? 'an array' : typeof value}`);
  });
  return undefined;
}

function statusRow(
  customerId: string,
  l: Loyalty,
  observedAt: string,
  timezone: string,
  problems: FieldRejectRow[],
): Row {
  const fields = new LenientFields(customerId);
  const program = part(fields, 'program', l.program);
  const tier = part(fields, 'tier', l.tier);
  const expiry = part(fields, 'expiry', l.expiry);
  const row = {
    customer_id: customerId,
    program_name: fields.text('program.name', program?.name),
    program_logo: fields.text('program.logo', program?.logo),
    tier_name: fields.text('tier.name', tier?.name),
    tier_order: fields.integer('tier.order', tier?.order),
    tier_logo: fields.text('tier.logo', tier?.logo),
    tier_expires_at: fields.timestamp('tier.expiry', tier?.expiry, timezone),
    tier_benefits: fields.text('tier.benefits', tier?.benefits),
    points_expiring: fields.decimal('expiry.point', expiry?.point),
    points_expiring_on: fields.date('expiry.date', expiry?.date),
    to_next_tier: fields.decimal('toNextTier', l.toNextTier),
    cumulative_credit: fields.decimal('cumulativeCredit', l.cumulativeCredit),
    observed_at: observedAt,
    // members of the answer, its program, tier and expiry; those of wallets and expiries go on their own rows
    [UNLISTED]: unlistedJson([
      ...unlistedMembers(l, LOYALTY_MEMBERS),
      ...unlistedMembers(program, PROGRAM_MEMBERS, 'program.'),
      ...unlistedMembers(tier, TIER_MEMBERS, 'tier.'),
      ...unlistedMembers(expiry, EXPIRY_MEMBERS, 'expiry.'),
    ]),
  };
  problems.push(...fields.rows());
  return row;
}

/** A row per wallet, with the `redeemable[]` entry of its country and currency; an entry of no wallet is a reject. */
function walletRows(customerId: string, l: Loyalty, problems: FieldRejectRow[]): Row[] {
  const redeemable = new Map<string, { points: unknown; value: unknown; index: number; unlisted: UnlistedMember[] }>();
  for (const [i, r] of (l.redeemable ?? []).entries()) {
    const key = walletKey(
      required(r.countryIso, `redeemable.${i}.countryIso`),
      required(r.currency, `redeemable.${i}.currency`),
    );
    if (redeemable.has(key)) throw new RecordError(`redeemable.${i}`, `a second redeemable entry of wallet ${key}`);
    redeemable.set(key, {
      points: r.point,
      value: r.value,
      index: i,
      unlisted: unlistedMembers(r, WALLET_MEMBERS, 'redeemable[].'),
    });
  }
  const wallets = (l.wallets ?? []).map((w, i) => {
    const iso = required(w.countryIso, `wallets.${i}.countryIso`);
    const currency = required(w.currency, `wallets.${i}.currency`);
    const key = walletKey(iso, currency);
    const r = redeemable.get(key);
    redeemable.delete(key);
    const fields = new LenientFields(`${customerId} ${key}`);
    const row = {
      customer_id: customerId,
      country_iso: iso,
      country_name: fields.text(`wallets.${i}.countryName`, w.countryName),
      currency,
      points: fields.decimal(`wallets.${i}.point`, w.point),
      value: fields.decimal(`wallets.${i}.value`, w.value),
      redeemable_points: r ? fields.decimal(`redeemable.${r.index}.point`, r.points) : null,
      redeemable_value: r ? fields.decimal(`redeemable.${r.index}.value`, r.value) : null,
      [UNLISTED]: unlistedJson([...unlistedMembers(w, WALLET_MEMBERS, 'wallets[].'), ...(r?.unlisted ?? [])]),
    };
    problems.push(...fields.rows());
    return row;
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

function detailRows(customerId: string, l: Loyalty, timezone: string, problems: FieldRejectRow[]): Row[] {
  const details = (l.balanceDetails ?? []).map((d, i) => {
    const expiresAt = parseSourceTimestamp(d.expires, timezone, `balanceDetails.${i}.expires`);
    const fields = new LenientFields(`${customerId} ${expiresAt}`);
    const row = {
      customer_id: customerId,
      expires_at: expiresAt,
      points_gained: fields.decimal(`balanceDetails.${i}.loyaltyPointsGained`, d.loyaltyPointsGained),
      points_redeemed: fields.decimal(`balanceDetails.${i}.loyaltyPointsRedeemed`, d.loyaltyPointsRedeemed),
      points_expired: fields.decimal(`balanceDetails.${i}.loyaltyPointsExpired`, d.loyaltyPointsExpired),
      [UNLISTED]: unlistedJson(unlistedMembers(d, DETAIL_MEMBERS, 'balanceDetails[].')),
    };
    problems.push(...fields.rows());
    return row;
  });
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
