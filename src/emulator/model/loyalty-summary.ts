import { nextTier, tierFor } from './loyalty-tiers.js';
import type { Posting } from './posting-ledger.js';
import { roundTo } from './random.js';
import { formatUtcWall } from './zone-clock.js';

const POINT_VALUE = 0.05;
const YEAR_MS = 365 * 86_400_000;

/**
 * The `loyalty` member of `GET /accounts?includeLoyalty=true`, computed from the customer's postings so
 * it always agrees with what the postings endpoint serves.
 */
export function loyaltySummary(postings: readonly Posting[]): Record<string, unknown> {
  const gained = roundTo(postings.reduce((sum, p) => sum + p.credit, 0), 2);
  const redeemed = roundTo(postings.reduce((sum, p) => sum + p.debit, 0), 2);
  const balance = roundTo(gained - redeemed, 2);
  const tier = tierFor(gained);
  const next = nextTier(tier);
  const lastMs = postings.length > 0 ? postings[postings.length - 1]!.postedMs : 0;
  const expiresMs = lastMs + YEAR_MS;
  const home = postings[0];
  const wallet = {
    countryIso: home?.countryIso ?? 'GR',
    countryName: home ? home.country : null,
    currency: home?.currency ?? 'EUR',
    point: balance,
    value: roundTo(balance * POINT_VALUE, 4),
  };
  const redeemable = Math.floor(balance / 10) * 10;
  return {
    program: { name: 'Loyalty Club', logo: 'https://cdn.example.com/loyalty/program.png' },
    tier: {
      name: tier.name,
      logo: `https://cdn.example.com/loyalty/${tier.name.toLowerCase()}.png`,
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
