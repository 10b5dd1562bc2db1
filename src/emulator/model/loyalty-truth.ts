import type { ActivityOverlay } from './activity-overlay.js';
import { type LoyaltyState, tierLogo } from './loyalty-summary.js';
import { LOYALTY_PROGRAM as PROGRAM, POINT_VALUE } from './loyalty-tiers.js';
import { roundTo } from './random.js';
import { type TruthVoucher, truthVoucher } from './vouchers.js';
import { isoUtc } from './zone-clock.js';

/** A customer's loyalty status (`GET /accounts?includeLoyalty=true`) as a correct warehouse holds it. */
export interface TruthLoyaltyStatus {
  customer_id: string;
  program_name: string;
  program_logo: string;
  tier_name: string;
  tier_order: number;
  tier_logo: string;
  /** ISO UTC */
  tier_expires_at: string;
  tier_benefits: string;
  /** `expiry.point`: the next points to expire (0 when none). */
  points_expiring: number;
  /** `expiry.date`, YYYY-MM-DD: their last valid day, or null when none. */
  points_expiring_on: string | null;
  to_next_tier: number;
  cumulative_credit: number;
}

/** One wallet (customer × country × currency), its redeemable part beside it. */
export interface TruthLoyaltyWallet {
  customer_id: string;
  country_iso: string;
  country_name: string | null;
  currency: string;
  points: number;
  value: number;
  redeemable_points: number;
  redeemable_value: number;
}

/** One `balanceDetails[]` element (customer × expiry). */
export interface TruthBalanceDetail {
  customer_id: string;
  /** ISO UTC: the instant the points expire(d). */
  expires_at: string;
  points_gained: number;
  points_redeemed: number;
  points_expired: number;
}

/** A customer's status with its wallets and balance details. */
export interface TruthLoyalty extends TruthLoyaltyStatus {
  wallets: TruthLoyaltyWallet[];
  balance_details: TruthBalanceDetail[];
}

/** The canonical (warehouse) form of a loyalty standing. */
export function truthLoyalty(customerId: string, state: LoyaltyState): TruthLoyalty {
  const { tier, next } = state;
  return {
    customer_id: customerId,
    program_name: PROGRAM.name,
    program_logo: PROGRAM.logo,
    tier_name: tier.name,
    tier_order: tier.order,
    tier_logo: tierLogo(tier),
    tier_expires_at: isoUtc(state.tierExpiryMs),
    tier_benefits: tier.benefits,
    points_expiring: state.nextExpiry?.points ?? 0,
    points_expiring_on: state.nextExpiry?.date ?? null,
    to_next_tier: next ? roundTo(next.attain - state.gained, 2) : 0,
    cumulative_credit: state.gained,
    wallets: state.wallets.map((w) => ({
      customer_id: customerId,
      country_iso: w.countryIso,
      country_name: w.countryName,
      currency: w.currency,
      points: w.point,
      value: roundTo(w.point * POINT_VALUE, 4),
      redeemable_points: w.redeemable,
      redeemable_value: roundTo(w.redeemable * POINT_VALUE, 4),
    })),
    balance_details: state.details.map((d) => ({
      customer_id: customerId,
      expires_at: isoUtc(d.expiresMs),
      points_gained: d.gained,
      points_redeemed: d.redeemed,
      points_expired: d.expired,
    })),
  };
}

/** Every customer created by `asOfMs`, in index order, with its loyalty as of then; written activity included. */
export function* loyaltyTruth(activity: ActivityOverlay, asOfMs: number): Generator<TruthLoyalty> {
  const { directory } = activity.data;
  // Creation instants grow with the index, so the customers that exist at an instant are a prefix.
  for (let i = 0; i < directory.size && activity.existsAt(i, asOfMs); i++) {
    yield truthLoyalty(directory.customerId(i), activity.loyaltyOf(i, asOfMs, false));
  }
}

/** Every voucher listed at `asOfMs` (customer × code), customers in index order. */
export function* voucherTruth(activity: ActivityOverlay, asOfMs: number): Generator<TruthVoucher> {
  const { directory } = activity.data;
  for (let i = 0; i < directory.size && activity.existsAt(i, asOfMs); i++) {
    const customerId = directory.customerId(i);
    for (const voucher of activity.vouchersOf(i, asOfMs, false)) yield truthVoucher(customerId, voucher);
  }
}
