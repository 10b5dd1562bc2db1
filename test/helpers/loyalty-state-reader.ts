import type { GroundTruth } from '../../src/emulator/index.js';
import type { SqlConnection } from '../../src/load/warehouse/sql-connection.js';
import { epochMs, isoOf, sortedByJson } from './warehouse-reader.js';

type Raw = Record<string, string | number | boolean | null>;

const num = (v: unknown) => (v === null || v === undefined ? null : Number(v));
const bool = (v: unknown) => (v === null || v === undefined ? null : v === true || v === 'true');

/** The warehouse's loyalty state and vouchers in the shapes of the emulator's ground truth, each sorted. */
export interface HeldLoyaltyState {
  status: Array<Record<string, unknown>>;
  wallets: Array<Record<string, unknown>>;
  details: Array<Record<string, unknown>>;
  /** Vouchers still listed (gone_at NULL), without the columns of when they were seen. */
  vouchers: Array<Record<string, unknown>>;
}

/** Reads `loyalty_status`, `loyalty_wallets`, `loyalty_balance_details` and the listed `vouchers`. */
export async function readLoyaltyState(conn: SqlConnection): Promise<HeldLoyaltyState> {
  const status = await conn.all<Raw>(
    `SELECT customer_id, program_name, program_logo, tier_name, tier_order, tier_logo, ${epochMs('tier_expires_at')} AS tier_expires_at, tier_benefits,
            CAST(points_expiring AS VARCHAR) AS points_expiring, CAST(points_expiring_on AS VARCHAR) AS points_expiring_on,
            CAST(to_next_tier AS VARCHAR) AS to_next_tier, CAST(cumulative_credit AS VARCHAR) AS cumulative_credit FROM loyalty_status`,
  );
  const wallets = await conn.all<Raw>(
    `SELECT customer_id, country_iso, country_name, currency, CAST(points AS VARCHAR) AS points, CAST(value AS VARCHAR) AS value,
            CAST(redeemable_points AS VARCHAR) AS redeemable_points, CAST(redeemable_value AS VARCHAR) AS redeemable_value FROM loyalty_wallets`,
  );
  const details = await conn.all<Raw>(
    `SELECT customer_id, ${epochMs('expires_at')} AS expires_at, CAST(points_gained AS VARCHAR) AS points_gained,
            CAST(points_redeemed AS VARCHAR) AS points_redeemed, CAST(points_expired AS VARCHAR) AS points_expired FROM loyalty_balance_details`,
  );
  const vouchers = await conn.all<Raw>(
    `SELECT customer_id, code, title, icon, CAST(value AS VARCHAR) AS value, value_type, CAST(expires_on AS VARCHAR) AS expires_on,
            enabled, status, ${epochMs('redeemed_at')} AS redeemed_at, redeemed_branch FROM vouchers WHERE gone_at IS NULL`,
  );
  return {
    status: sortedByJson(
      status.map((r) => ({
        ...r,
        tier_order: num(r.tier_order),
        tier_expires_at: isoOf(r.tier_expires_at as number),
        points_expiring: num(r.points_expiring),
        to_next_tier: num(r.to_next_tier),
        cumulative_credit: num(r.cumulative_credit),
      })),
    ),
    wallets: sortedByJson(
      wallets.map((r) => ({
        ...r,
        points: num(r.points),
        value: num(r.value),
        redeemable_points: num(r.redeemable_points),
        redeemable_value: num(r.redeemable_value),
      })),
    ),
    details: sortedByJson(
      details.map((r) => ({
        ...r,
        expires_at: isoOf(r.expires_at as number),
        points_gained: num(r.points_gained),
        points_redeemed: num(r.points_redeemed),
        points_expired: num(r.points_expired),
      })),
    ),
    vouchers: sortedByJson(
      vouchers.map((r) => ({
        ...r,
        value: num(r.value),
        enabled: bool(r.enabled),
        redeemed_at: isoOf(r.redeemed_at as number),
      })),
    ),
  };
}

/** Every voucher row, listed or gone, with when it was seen (epoch ms), by `customer_id/code`. */
export async function readVoucherRows(
  conn: SqlConnection,
): Promise<Map<string, { status: string; first: number; last: number; gone: number | null }>> {
  const rows = await conn.all<Raw>(
    `SELECT customer_id, code, status, ${epochMs('first_seen_at')} AS first_seen_at, ${epochMs('last_seen_at')} AS last_seen_at, ${epochMs('gone_at')} AS gone_at FROM vouchers`,
  );
  return new Map(
    rows.map((r) => [
      `${r.customer_id}/${r.code}`,
      { status: String(r.status), first: Number(r.first_seen_at), last: Number(r.last_seen_at), gone: num(r.gone_at) },
    ]),
  );
}

/** When each customer was last observed by `stream` (epoch ms), by customer. */
export async function readObservations(
  conn: SqlConnection,
  stream: string,
): Promise<Map<string, { at: number; outcome: string }>> {
  const rows = await conn.all<Raw>(
    `SELECT customer_id, ${epochMs('observed_at')} AS at, outcome FROM _etl_customer_observations WHERE stream = $1`,
    [stream],
  );
  return new Map(rows.map((r) => [String(r.customer_id), { at: Number(r.at), outcome: String(r.outcome) }]));
}

/** The emulator's ground truth of the loyalty state, in the same shapes and order as {@link readLoyaltyState}. */
export function truthState(truth: GroundTruth): HeldLoyaltyState {
  const plain = (o: object): Record<string, unknown> => ({ ...o });
  return {
    status: sortedByJson([...truth.loyaltyStatus()].map(({ wallets: _w, balance_details: _d, ...s }) => plain(s))),
    wallets: sortedByJson([...truth.loyaltyWallets()].map(plain)),
    details: sortedByJson([...truth.loyaltyBalanceDetails()].map(plain)),
    vouchers: sortedByJson([...truth.vouchers()].map(plain)),
  };
}
