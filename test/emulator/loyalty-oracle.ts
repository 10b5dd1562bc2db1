import { DateTime } from 'luxon';
import { expect } from 'vitest';
import { ZONE, readPostingTime, readTimestamp } from './emulator-fixture.js';

/** Days the points credited in each tier stay valid, by tier order, and bonus points (README, "Loyalty over time"). */
export const VALID_DAYS = [30, 90, 180, 365];
export const BONUS_VALID_DAYS = 30;

/** The instant (ms) the points of a credit posted at `postedAt` expire: the end of the month its validity ends in. */
export function creditExpiry(postedAt: string, validDays: number, zone = ZONE): number {
  return DateTime.fromISO(postedAt, { zone })
    .startOf('day')
    .plus({ days: validDays })
    .startOf('month')
    .plus({ months: 1 })
    .toMillis();
}

interface Bucket {
  expires: number;
  gained: number;
  redeemed: number;
  expired: number;
  remaining: number;
}

/** What the documented rule makes of served postings as of `asOfMs`, recomputed without the emulator's code. */
export interface Expected {
  cumulativeCredit: number;
  /** `countryIso/currency` → points, in the order wallets were first posted to. */
  wallets: Map<string, number>;
  /** Per expiry instant (ms), summed over wallets. */
  details: Map<number, { gained: number; redeemed: number; expired: number; remaining: number }>;
  /** Debits that found fewer points than they took. */
  overdrawn: number;
}

/**
 * Replays served postings (oldest first) as of `asOfMs`: each credit into its wallet's bucket of its expiry
 * instant, each debit from the wallet's soonest-expiring points, whatever is left at an expiry instant expired.
 * Amounts in hundredths of a point.
 */
export function replay(postings: readonly any[], asOfMs: number): Expected {
  const wallets = new Map<string, Bucket[]>();
  let gained = 0;
  let overdrawn = 0;
  const expireThrough = (ms: number) => {
    for (const buckets of wallets.values()) {
      for (const b of buckets)
        if (b.expires <= ms && b.remaining > 0) [b.expired, b.remaining] = [b.expired + b.remaining, 0];
    }
  };
  for (const p of postings) {
    const postedMs = Date.parse(readPostingTime(p.postingDate));
    if (postedMs > asOfMs) break;
    expireThrough(postedMs);
    const key = `${p.countryIso}/${p.currency}`;
    const buckets = wallets.get(key) ?? [];
    wallets.set(key, buckets);
    const credit = Math.round(p.credit * 100);
    let debit = Math.round(p.debit * 100);
    if (credit > 0) {
      gained += credit;
      const expires = creditExpiry(
        readPostingTime(p.postingDate),
        p.type === 3 ? BONUS_VALID_DAYS : VALID_DAYS[p.tierOrder - 1]!,
      );
      let bucket = buckets.find((b) => b.expires === expires);
      if (!bucket) buckets.push((bucket = { expires, gained: 0, redeemed: 0, expired: 0, remaining: 0 }));
      bucket.gained += credit;
      bucket.remaining += credit;
    }
    for (const b of [...buckets].sort((x, y) => x.expires - y.expires)) {
      const taken = Math.min(b.remaining, debit);
      [b.remaining, b.redeemed, debit] = [b.remaining - taken, b.redeemed + taken, debit - taken];
    }
    if (debit > 0) overdrawn++;
  }
  expireThrough(asOfMs);
  const details = new Map<number, { gained: number; redeemed: number; expired: number; remaining: number }>();
  for (const b of [...wallets.values()].flat()) {
    const d = details.get(b.expires) ?? { gained: 0, redeemed: 0, expired: 0, remaining: 0 };
    details.set(b.expires, {
      gained: d.gained + b.gained,
      redeemed: d.redeemed + b.redeemed,
      expired: d.expired + b.expired,
      remaining: d.remaining + b.remaining,
    });
  }
  const points = new Map(
    [...wallets].map(([key, buckets]) => [key, buckets.reduce((sum, b) => sum + b.remaining, 0) / 100]),
  );
  const cents = (d: Bucket | { gained: number; redeemed: number; expired: number; remaining: number }) => ({
    gained: d.gained / 100,
    redeemed: d.redeemed / 100,
    expired: d.expired / 100,
    remaining: d.remaining / 100,
  });
  return {
    cumulativeCredit: gained / 100,
    wallets: points,
    details: new Map([...details].sort(([a], [b]) => a - b).map(([k, d]) => [k, cents(d)])),
    overdrawn,
  };
}

/** What a warehouse holds for a served `loyalty` member, read without the emulator's code. */
export function loyaltyAsWarehouse(customerId: string, l: any) {
  return {
    customer_id: customerId,
    program_name: l.program.name,
    program_logo: l.program.logo,
    tier_name: l.tier.name,
    tier_order: l.tier.order,
    tier_logo: l.tier.logo,
    tier_expires_at: readTimestamp(l.tier.expiry),
    tier_benefits: l.tier.benefits,
    points_expiring: l.expiry.point,
    points_expiring_on: l.expiry.date,
    to_next_tier: l.toNextTier,
    cumulative_credit: l.cumulativeCredit,
    wallets: l.wallets.map((w: any, n: number) => {
      const redeemable = l.redeemable[n];
      expect([redeemable.countryIso, redeemable.currency]).toEqual([w.countryIso, w.currency]);
      return {
        customer_id: customerId,
        country_iso: w.countryIso,
        country_name: w.countryName,
        currency: w.currency,
        points: w.point,
        value: w.value,
        redeemable_points: redeemable.point,
        redeemable_value: redeemable.value,
      };
    }),
    balance_details: l.balanceDetails.map((d: any) => ({
      customer_id: customerId,
      expires_at: readTimestamp(d.expires),
      points_gained: d.loyaltyPointsGained,
      points_redeemed: d.loyaltyPointsRedeemed,
      points_expired: d.loyaltyPointsExpired,
    })),
  };
}
