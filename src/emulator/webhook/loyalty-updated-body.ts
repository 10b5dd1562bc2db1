import type { CustomerVersion } from '../model/customer-directory.js';
import { LOYALTY_TIERS, type LoyaltyTier } from '../model/loyalty-tiers.js';
import { POINT_VALUE, loyaltyState, redeemablePoints, tierLogo } from '../model/loyalty-summary.js';
import type { Posting } from '../model/posting-ledger.js';
import { roundTo } from '../model/random.js';
import { formatUtcWall } from '../model/zone-clock.js';

/** The trigger of the loyalty webhook (the only one the spec shows). */
export const LOYALTY_POINT_UPDATED = 'LOYALTY_POINT_UPDATED';

const POINT_SETTING_CREATED = '2021-03-04 15:07:12 UTC';

function utc(ms: number): string {
  return `${formatUtcWall(ms)} UTC`;
}

function tierObject(tier: LoyaltyTier): Record<string, unknown> {
  return {
    name: tier.name,
    logo: tierLogo(tier),
    tierOrder: tier.order,
    pointsAttain: tier.attain,
    pointsAttainDays: 365,
    pointsRetain: tier.attain,
    pointsRetainDays: 365,
    pointsExpiryDays: 365,
    benefits: tier.benefits,
  };
}

/**
 * The body of the loyalty webhook (spec, "Loyalty updated webhook") for a customer as of `version` with
 * postings `postings`. `origin.source` says what changed the points (`POS`, `ECOMMERCE`, `ROLLBACK`); a
 * customer without a phone is sent with `phone: null`; `nextTier` is null in the top tier.
 */
export function loyaltyUpdatedBody(version: CustomerVersion, postings: readonly Posting[], source: string): Record<string, unknown> {
  const state = loyaltyState(postings);
  const { wallet, tier, next } = state;
  const redeemable = redeemablePoints(state.balance);
  const tierIndex = LOYALTY_TIERS.indexOf(tier);
  return {
    origin: { trigger: LOYALTY_POINT_UPDATED, source, country: { iso: wallet.countryIso } },
    customer: {
      phone: version.phone,
      accountId: version.customerId,
      first: version.first,
      gender: version.gender,
      city: version.city,
      country: version.country,
      language: version.language,
      accountType: 'MEMBER',
      businessFields: Object.fromEntries(version.customFields),
    },
    entity: {
      loyaltyTier: tierObject(tier),
      nextTier: next ? { ...tierObject(next), id: tierIndex + 2 } : null,
      tierExpiry: utc(state.expiresMs),
      tierRetainExpiry: utc(state.expiresMs),
      wallets: [
        {
          countryIso: wallet.countryIso,
          currency: wallet.currency,
          point: state.balance,
          value: roundTo(state.balance * POINT_VALUE, 4),
          pointSetting: {
            id: 1,
            countryIso: wallet.countryIso,
            currency: wallet.currency,
            pointValue: POINT_VALUE,
            created: POINT_SETTING_CREATED,
            createdBy: 1,
            modified: POINT_SETTING_CREATED,
            modifiedBy: 1,
          },
        },
      ],
      pointExpiry: utc(state.expiresMs),
      tierBalance: state.gained,
      pendingTierBalance: 0,
      toNextTier: next ? roundTo(next.attain - state.gained, 2) : 0,
      redeemable: [{ countryIso: wallet.countryIso, currency: wallet.currency, point: redeemable, value: roundTo(redeemable * POINT_VALUE, 4) }],
      membershipDate: utc(version.memberSinceMs ?? version.customerSinceMs ?? version.profileSetMs),
      cumulativeCredit: state.gained,
      pendingCredit: 0,
      calculateByPending: false,
      membershipId: `M${version.customerId.slice(1)}`,
    },
    generic: false,
  };
}
