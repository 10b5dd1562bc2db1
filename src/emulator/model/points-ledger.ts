import type { LocalDays } from './local-days.js';
import { creditExpiresMs } from './point-expiry.js';
import type { Posting } from './posting.js';

/** A wallet: the points a customer holds in one country and currency. */
export interface WalletKey {
  countryIso: string;
  /** The country's name as the first posting of the wallet gave it (null for the empty wallet of a customer without postings). */
  countryName: string | null;
  currency: string;
}

/** The points credited into one wallet that expire at one instant, in hundredths of a point. */
export interface PointsBucket {
  expiresMs: number;
  gained: number;
  /** Taken by debits (oldest-expiring first) or by a debt the credit paid off. */
  redeemed: number;
  /** What was left when the bucket expired; 0 until then. */
  expired: number;
  /** Still spendable (0 once expired). */
  remaining: number;
}

/** A wallet's points: its buckets and what it owes (a rollback may debit more than the wallet holds). */
export interface WalletPoints extends WalletKey {
  /** Every bucket ever credited, by expiry. */
  buckets: PointsBucket[];
  /** Hundredths of a point debited beyond what the wallet held; the next credits pay it off first. */
  debt: number;
}

/** Hundredths of a point, exactly: postings carry points to the cent. */
export function cents(points: number): number {
  return Math.round(points * 100);
}

/**
 * A customer's points through time, one posting after the other: each credit goes into the bucket of its
 * wallet and expiry instant ({@link creditExpiresMs}); each debit takes from the wallet's buckets that expire
 * soonest (FIFO by expiry), and what they cannot cover becomes a debt; at a bucket's expiry instant whatever
 * is left in it expires. Amounts are kept in hundredths of a point, so sums never drift.
 */
export class PointsLedger {
  readonly wallets: WalletPoints[] = [];
  /** Hundredths of a point credited in total: the cumulative credit. */
  gained = 0;
  /** Instant of the last posting applied. */
  lastPostedMs = Number.NEGATIVE_INFINITY;
  private nextExpiryMs = Number.POSITIVE_INFINITY;

  constructor(private readonly days: LocalDays) {}

  /** The wallet of a country and currency, created on first use (the first one is the home wallet). */
  wallet(countryIso: string, currency: string, countryName: string | null): WalletPoints {
    let wallet = this.wallets.find((w) => w.countryIso === countryIso && w.currency === currency);
    if (!wallet) {
      wallet = { countryIso, countryName, currency, buckets: [], debt: 0 };
      this.wallets.push(wallet);
    }
    return wallet;
  }

  /** Expires every bucket whose instant is at or before `ms`. */
  advanceTo(ms: number): void {
    if (ms < this.nextExpiryMs) return;
    let next = Number.POSITIVE_INFINITY;
    for (const wallet of this.wallets) {
      for (const bucket of wallet.buckets) {
        if (bucket.remaining > 0 && bucket.expiresMs <= ms) {
          bucket.expired += bucket.remaining;
          bucket.remaining = 0;
        } else if (bucket.remaining > 0 && bucket.expiresMs < next) {
          next = bucket.expiresMs;
        }
      }
    }
    this.nextExpiryMs = next;
  }

  /** Books one posting, after expiring what was due before it. Postings must come in posting-time order. */
  apply(posting: Posting): void {
    this.advanceTo(posting.postedMs);
    this.lastPostedMs = posting.postedMs;
    const wallet = this.wallet(posting.countryIso, posting.currency, posting.country);
    const credit = cents(posting.credit);
    const debit = cents(posting.debit);
    if (credit > 0) {
      this.gained += credit;
      const bucket = this.bucket(wallet, creditExpiresMs(posting, this.days));
      const repaid = Math.min(credit, wallet.debt);
      wallet.debt -= repaid;
      bucket.gained += credit;
      bucket.redeemed += repaid;
      bucket.remaining += credit - repaid;
      if (bucket.remaining > 0) this.nextExpiryMs = Math.min(this.nextExpiryMs, bucket.expiresMs);
    }
    let owed = debit;
    for (const bucket of wallet.buckets) {
      if (owed === 0) break;
      const taken = Math.min(owed, bucket.remaining);
      bucket.remaining -= taken;
      bucket.redeemed += taken;
      owed -= taken;
    }
    wallet.debt += owed;
  }

  /** Points a wallet holds now, in hundredths: what its buckets have left, less its debt. */
  static balance(wallet: WalletPoints): number {
    let sum = 0;
    for (const bucket of wallet.buckets) sum += bucket.remaining;
    return sum - wallet.debt;
  }

  private bucket(wallet: WalletPoints, expiresMs: number): PointsBucket {
    const { buckets } = wallet;
    let at = buckets.length;
    while (at > 0 && buckets[at - 1]!.expiresMs > expiresMs) at--;
    if (at > 0 && buckets[at - 1]!.expiresMs === expiresMs) return buckets[at - 1]!;
    const bucket: PointsBucket = { expiresMs, gained: 0, redeemed: 0, expired: 0, remaining: 0 };
    buckets.splice(at, 0, bucket);
    return bucket;
  }
}
