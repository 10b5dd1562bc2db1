import type { CustomerVersion } from '../model/customer-directory.js';
import { LocalDays } from '../model/local-days.js';
import { LOYALTY_TIERS, type LoyaltyTier, POINT_VALUE } from '../model/loyalty-tiers.js';
import { type LoyaltyState, labelledUtc, loyaltyState, tierLogo } from '../model/loyalty-summary.js';
import { pointsExpiryDays } from '../model/point-expiry.js';
import type { Posting } from '../model/posting.js';
import { roundTo } from '../model/random.js';
import { ZoneClock } from '../model/zone-clock.js';
import { servedFields } from '../model/custom-field-pool.js';

/** The trigger of the loyalty webhook (the only one the spec shows). */
export const LOYALTY_POINT_UPDATED = 'LOYALTY_POINT_UPDATED';

const POINT_SETTING_CREATED = '2021-03-04 15:07:12 UTC';

function tierObject(tier: LoyaltyTier): Record<string, unknown> {
  return {
    name: tier.name,
    logo: tierLogo(tier),
    tierOrder: tier.order,
    pointsAttain: tier.attain,
    pointsAttainDays: 365,
    pointsRetain: tier.attain,
    pointsRetainDays: 365,
    pointsExpiryDays: pointsExpiryDays(tier),
    benefits: tier.benefits,
  };
}

/**
 * The body of the loyalty webhook for a customer as of `version` with postings `postings` (oldest first),
 * as of `asOfMs` (default: the last posting) in `timezone` (default `Europe/Athens`, the emulator's). See
 * {@link loyaltyUpdatedBodyOf}.
 */
export function loyaltyUpdatedBody(
  version: CustomerVersion,
  postings: readonly Posting[],
  source: string,
  options: { asOfMs?: number; timezone?: string } = {},
): Record<string, unknown> {
  const asOfMs = options.asOfMs ?? postings.at(-1)?.postedMs ?? version.profileSetMs;
  const days = new LocalDays(new ZoneClock(options.timezone ?? 'Europe/Athens'));
  return loyaltyUpdatedBodyOf(version, loyaltyState(postings, asOfMs, postings[0]?.postedMs ?? asOfMs, days), source);
}

/**
 * The body of the loyalty webhook (spec, "Loyalty updated webhook") for a customer as of `version` with
 * loyalty standing `state`. `origin.source` says what changed the points (`POS`, `ECOMMERCE`, `ROLLBACK`,
 * `EXPIRY`) and `origin.country.iso` is the country of `country` (default: the home wallet's); a customer
 * without a phone is sent with `phone: null`; `nextTier` is null in the top tier; `pointExpiry` is the
 * instant the next points expire, null when none are left to expire.
 */
export function loyaltyUpdatedBodyOf(
  version: CustomerVersion,
  state: LoyaltyState,
  source: string,
  country = state.wallets[0]!.countryIso,
): Record<string, unknown> {
  const { tier, next } = state;
  const tierIndex = LOYALTY_TIERS.indexOf(tier);
  const money = (point: number) => roundTo(point * POINT_VALUE, 4);
  return {
    origin: { trigger: LOYALTY_POINT_UPDATED, source, country: { iso: country } },
    customer: {
      phone: version.phone,
      accountId: version.customerId,
      first: version.first,
      gender: version.gender,
      city: version.city,
      country: version.country,
      language: version.language,
      accountType: 'MEMBER',
      businessFields: servedFields(version.customFields),
    },
    entity: {
      loyaltyTier: tierObject(tier),
      nextTier: next ? { ...tierObject(next), id: tierIndex + 2 } : null,
      tierExpiry: labelledUtc(state.tierExpiryMs),
      tierRetainExpiry: labelledUtc(state.tierExpiryMs),
      wallets: state.wallets.map((w) => ({
        countryIso: w.countryIso,
        currency: w.currency,
        point: w.point,
        value: money(w.point),
        pointSetting: {
          id: 1,
          countryIso: w.countryIso,
          currency: w.currency,
          pointValue: POINT_VALUE,
          created: POINT_SETTING_CREATED,
          createdBy: 1,
          modified: POINT_SETTING_CREATED,
          modifiedBy: 1,
        },
      })),
      pointExpiry: state.nextExpiry ? labelledUtc(state.nextExpiry.expiresMs) : null,
      tierBalance: state.gained,
      pendingTierBalance: 0,
      toNextTier: next ? roundTo(next.attain - state.gained, 2) : 0,
      redeemable: state.wallets.map((w) => ({
        countryIso: w.countryIso,
        currency: w.currency,
        point: w.redeemable,
        value: money(w.redeemable),
      })),
      membershipDate: labelledUtc(version.memberSinceMs ?? version.customerSinceMs ?? version.profileSetMs),
      cumulativeCredit: state.gained,
      pendingCredit: 0,
      calculateByPending: false,
      membershipId: `M${version.customerId.slice(1)}`,
    },
    generic: false,
  };
}
