import type { LoyaltyTier } from './loyalty-tiers.js';
import { LocalDays } from './local-days.js';
import type { Posting } from './posting.js';
import { POSTING_TYPE } from './posting-type.js';

/**
 * Days the points credited in each tier (by `tierOrder`) stay valid: the higher the tier, the longer its
 * members keep their points. The webhook's tier object shows them as `pointsExpiryDays`.
 */
const EXPIRY_DAYS_BY_TIER: readonly number[] = [30, 90, 180, 365];

/** Days promotional bonus points (posting type 3) stay valid, whatever the tier. */
export const BONUS_EXPIRY_DAYS = 30;

/** Days the points credited in `tier` stay valid. */
export function pointsExpiryDays(tier: Pick<LoyaltyTier, 'order'>): number {
  return EXPIRY_DAYS_BY_TIER[Math.min(Math.max(tier.order, 1), EXPIRY_DAYS_BY_TIER.length) - 1]!;
}

/**
 * When the points of a credit expire. The rule: a credit is valid for its tier's days (bonus points for
 * {@link BONUS_EXPIRY_DAYS}) from the local day it was posted, and its points expire at the end of the month
 * in which that validity ends — the instant the next month starts in the business's zone. Every expiry is
 * therefore a month boundary, so credits of one month share an expiry (a balance-detail bucket).
 */
export function creditExpiresMs(posting: Pick<Posting, 'postedMs' | 'tierOrder' | 'type'>, days: LocalDays): number {
  const validity =
    posting.type === POSTING_TYPE.bonus ? BONUS_EXPIRY_DAYS : pointsExpiryDays({ order: posting.tierOrder });
  return days.startOf(LocalDays.nextMonth(days.dayOf(posting.postedMs) + validity));
}

/** The month boundaries (local midnights starting a month) in (fromMs, toMs], oldest first: every instant points can expire at. */
export function expiryInstantsBetween(fromMs: number, toMs: number, days: LocalDays): number[] {
  const instants: number[] = [];
  if (!(toMs > fromMs)) return instants;
  for (let day = LocalDays.nextMonth(days.dayOf(fromMs) - 1); ; day = LocalDays.nextMonth(day)) {
    const start = days.startOf(day);
    if (start > toMs) return instants;
    if (start > fromMs) instants.push(start);
  }
}
