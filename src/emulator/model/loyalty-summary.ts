import { LocalDays } from './local-days.js';
import { LOYALTY_PROGRAM, type LoyaltyTier, POINT_VALUE, nextTier, tierFor } from './loyalty-tiers.js';
import { PointsLedger, type WalletKey } from './points-ledger.js';
import type { Posting } from './posting.js';
import { roundTo } from './random.js';
import { formatUtcWall } from './zone-clock.js';

export { POINT_VALUE };

/** The wallet a customer without postings holds: the program's home country, no name known, nothing in it. */
const EMPTY_WALLET: WalletKey = { countryIso: 'GR', countryName: null, currency: 'EUR' };

/** One wallet as of an instant, in points. */
export interface WalletState extends WalletKey {
  point: number;
  /** The part of `point` that can be redeemed: {@link redeemablePoints}. */
  redeemable: number;
}

/** The points of every wallet that expire at one instant: one `balanceDetails[]` element. */
export interface BalanceDetail {
  expiresMs: number;
  gained: number;
  redeemed: number;
  /** 0 until `expiresMs` has passed. */
  expired: number;
}

/** A customer's loyalty standing as of an instant, computed from their postings. */
export interface LoyaltyState {
  asOfMs: number;
  /** Points credited in total (the cumulative credit; the tier is reached on it and never lost). */
  gained: number;
  tier: LoyaltyTier;
  next: LoyaltyTier | null;
  /** The tier's next yearly review: the first anniversary of reaching it after `asOfMs`. */
  tierExpiryMs: number;
  /** Every wallet, the home wallet (of the first posting) first; never empty. */
  wallets: WalletState[];
  /** One per expiry instant, oldest first, expired and fully redeemed ones included. */
  details: BalanceDetail[];
  /** The next points to expire, or null when nothing is left to expire. `date` is their last valid day. */
  nextExpiry: { points: number; expiresMs: number; date: string } | null;
}

/** The tier and home wallet after `postings`, which need no clock: what a sale is booked with. */
export function loyaltyStanding(postings: readonly Posting[]): { gained: number; tier: LoyaltyTier; home: WalletKey } {
  const gained = roundTo(
    postings.reduce((sum, p) => sum + p.credit, 0),
    2,
  );
  const first = postings[0];
  return {
    gained,
    tier: tierFor(gained),
    home: first ? { countryIso: first.countryIso, countryName: first.country, currency: first.currency } : EMPTY_WALLET,
  };
}

/**
 * The loyalty standing as of `asOfMs` of a customer who joined at `joinedMs`, from their postings (oldest
 * first; those after `asOfMs` do not count yet). Points expire by {@link creditExpiresMs} and debits take
 * the soonest-expiring points first ({@link PointsLedger}).
 */
export function loyaltyState(
  postings: readonly Posting[],
  asOfMs: number,
  joinedMs: number,
  days: LocalDays,
): LoyaltyState {
  const ledger = new PointsLedger(days);
  let tier = tierFor(0);
  let reachedMs = joinedMs;
  for (const posting of postings) {
    if (posting.postedMs > asOfMs) break;
    ledger.apply(posting);
    const now = tierFor(ledger.gained / 100);
    if (now !== tier) [tier, reachedMs] = [now, posting.postedMs];
  }
  ledger.advanceTo(asOfMs);
  if (ledger.wallets.length === 0)
    ledger.wallet(EMPTY_WALLET.countryIso, EMPTY_WALLET.currency, EMPTY_WALLET.countryName);
  const wallets = ledger.wallets.map((w) => {
    const point = PointsLedger.balance(w) / 100;
    return {
      countryIso: w.countryIso,
      countryName: w.countryName,
      currency: w.currency,
      point,
      redeemable: redeemablePoints(point),
    };
  });
  const byExpiry = new Map<number, { gained: number; redeemed: number; expired: number; remaining: number }>();
  for (const bucket of ledger.wallets.flatMap((w) => w.buckets)) {
    const sum = byExpiry.get(bucket.expiresMs) ?? { gained: 0, redeemed: 0, expired: 0, remaining: 0 };
    sum.gained += bucket.gained;
    sum.redeemed += bucket.redeemed;
    sum.expired += bucket.expired;
    sum.remaining += bucket.remaining;
    byExpiry.set(bucket.expiresMs, sum);
  }
  const instants = [...byExpiry.keys()].sort((a, b) => a - b);
  const details = instants.map((expiresMs) => {
    const sum = byExpiry.get(expiresMs)!;
    return { expiresMs, gained: sum.gained / 100, redeemed: sum.redeemed / 100, expired: sum.expired / 100 };
  });
  const upcoming = instants.find((ms) => byExpiry.get(ms)!.remaining > 0);
  return {
    asOfMs,
    gained: ledger.gained / 100,
    tier,
    next: nextTier(tier),
    tierExpiryMs: anniversaryAfter(reachedMs, asOfMs, days),
    wallets,
    details,
    nextExpiry:
      upcoming === undefined
        ? null
        : {
            points: byExpiry.get(upcoming)!.remaining / 100,
            expiresMs: upcoming,
            date: days.format(days.dayOf(upcoming) - 1),
          },
  };
}

/** The start of the first yearly anniversary (local day) of `sinceMs` that is after `asOfMs`. */
function anniversaryAfter(sinceMs: number, asOfMs: number, days: LocalDays): number {
  const since = days.dayOf(sinceMs);
  let years = Math.max(1, Math.floor((days.dayOf(asOfMs) - since) / 366));
  while (days.startOf(LocalDays.addYears(since, years)) <= asOfMs) years++;
  return days.startOf(LocalDays.addYears(since, years));
}

/** Points that can be redeemed: the balance in whole tens, never below zero (a rollback may overdraw). */
export function redeemablePoints(balance: number): number {
  return Math.max(0, Math.floor(balance / 10) * 10);
}

/** The logo URL of a tier. */
export function tierLogo(tier: LoyaltyTier): string {
  return `https://cdn.example.com/loyalty/${tier.name.toLowerCase()}.png`;
}

/** A response timestamp with its zone label, as the lookup and the webhook write instants. */
export function labelledUtc(ms: number): string {
  return `${formatUtcWall(ms)} UTC`;
}

/** The `loyalty` member of `GET /accounts?includeLoyalty=true` for a standing. */
export function loyaltySummary(state: LoyaltyState): Record<string, unknown> {
  const { tier, next, gained } = state;
  const wallet = (w: WalletState, point: number) => ({
    countryIso: w.countryIso,
    countryName: w.countryName,
    currency: w.currency,
    point,
    value: roundTo(point * POINT_VALUE, 4),
  });
  return {
    program: { ...LOYALTY_PROGRAM },
    tier: {
      name: tier.name,
      logo: tierLogo(tier),
      order: tier.order,
      expiry: labelledUtc(state.tierExpiryMs),
      benefits: tier.benefits,
    },
    wallets: state.wallets.map((w) => wallet(w, w.point)),
    redeemable: state.wallets.map((w) => wallet(w, w.redeemable)),
    expiry: { point: state.nextExpiry?.points ?? 0, date: state.nextExpiry?.date ?? null },
    toNextTier: next ? roundTo(next.attain - gained, 2) : 0,
    cumulativeCredit: gained,
    balanceDetails: state.details.map((d) => ({
      loyaltyPointsGained: d.gained,
      loyaltyPointsRedeemed: d.redeemed,
      loyaltyPointsExpired: d.expired,
      expires: labelledUtc(d.expiresMs),
    })),
  };
}
