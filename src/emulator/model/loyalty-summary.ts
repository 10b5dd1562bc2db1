import { type LoyaltyTier, nextTier, tierFor } from './loyalty-tiers.js';
import type { Posting } from './posting-ledger.js';
import { roundTo } from './random.js';
import { formatUtcWall } from './zone-clock.js';

/** Money value of one point, in the wallet's currency. */
export const POINT_VALUE = 0.05;
const YEAR_MS = 365 * 86_400_000;

/** A customer's loyalty standing, computed from their postings (oldest first). */
export interface LoyaltyState {
  /** Points credited in total (the tier is reached on this). */
  gained: number;
  /** Points debited in total. */
  redeemed: number;
  balance: number;
  tier: LoyaltyTier;
  next: LoyaltyTier | null;
  /** Points expire one year after the last posting (0 when there is none). */
  expiresMs: number;
  wallet: { countryIso: string; countryName: string | null; currency: string };
}

/** The loyalty standing after `postings`: what both the lookup and the webhook report. */
export function loyaltyState(postings: readonly Posting[]): LoyaltyState {
  const gained = roundTo(postings.reduce((sum, p) => sum + p.credit, 0), 2);
  const redeemed = roundTo(postings.reduce((sum, p) => sum + p.debit, 0), 2);
  const tier = tierFor(gained);
  const lastMs = postings.length > 0 ? postings[postings.length - 1]!.postedMs : 0;
  const home = postings[0];
  return {
    gained,
    redeemed,
    balance: roundTo(gained - redeemed, 2),
    tier,
    next: nextTier(tier),
    expiresMs: lastMs + YEAR_MS,
    wallet: { countryIso: home?.countryIso ?? 'GR', countryName: home ? home.country : null, currency: home?.currency ?? 'EUR' },
  };
}

/** Points that can be redeemed: the balance in whole tens, never below zero (a rollback may overdraw). */
export function redeemablePoints(balance: number): number {
  return Math.max(0, Math.floor(balance / 10) * 10);
}

/** The logo URL of a tier. */
export function tierLogo(tier: LoyaltyTier): string {
  return `https://cdn.example.com/loyalty/${tier.name.toLowerCase()}.png`;
}

/**
 * The `loyalty` member of `GET /accounts?includeLoyalty=true`, computed from the customer's postings so
 * it always agrees with what the postings endpoint serves.
 */
export function loyaltySummary(postings: readonly Posting[]): Record<string, unknown> {
  const { gained, redeemed, balance, tier, next, expiresMs, wallet: home } = loyaltyState(postings);
  const wallet = { ...home, point: balance, value: roundTo(balance * POINT_VALUE, 4) };
  const redeemable = redeemablePoints(balance);
  return {
    program: { name: 'Loyalty Club', logo: 'https://cdn.example.com/loyalty/program.png' },
    tier: {
      name: tier.name,
      logo: tierLogo(tier),
      order: tier.order,
      expiry: `${formatUtcWall(expiresMs)} UTC`,
      benefits: tier.benefits,
    },
    wallets: [wallet],
    redeemable: [{ ...wallet, point: redeemable, value: roundTo(redeemable * POINT_VALUE, 4) }],
    expiry: { point: roundTo(balance * 0.1, 2), date: formatUtcWall(expiresMs).slice(0, 10) },
    toNextTier: next ? roundTo(next.attain - gained, 2) : 0,
    cumulativeCredit: gained,
    balanceDetails: [
      {
        loyaltyPointsGained: gained,
        loyaltyPointsRedeemed: redeemed,
        loyaltyPointsExpired: 0,
        expires: `${formatUtcWall(expiresMs)} UTC`,
      },
    ],
  };
}
