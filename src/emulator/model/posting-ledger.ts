import type { CustomerDirectory } from './customer-directory.js';
import type { LocalDays } from './local-days.js';
import { POINT_VALUE, earnMultiplier, tierFor } from './loyalty-tiers.js';
import { BRANDS } from './name-pools.js';
import { PointsLedger } from './points-ledger.js';
import { POSTING_TYPE } from './posting-type.js';
import { type Random, Stream, randomFor, roundTo } from './random.js';
import { formatPostingTime, isoUtc } from './zone-clock.js';
import type { Posting } from './posting.js';

export type { Posting };

/** A posting as a correct warehouse must hold it. */
export interface TruthPosting {
  customer_id: string;
  /** ISO UTC */
  posted_at: string;
  txn_at: string;
  credit: number;
  credit_value: number;
  debit: number;
  debit_value: number;
  award_on: number | null;
  currency: string;
  receipt: string;
  branch_name: string;
  brand_name: string;
  country_iso: string;
  country: string;
  tier_order: number;
  tier_name: string;
  type: number;
  posting_type: number;
}

/** Where a customer shops: the wallet their postings go to. */
const HOMES = [
  { countryIso: 'GR', country: 'Greece', currency: 'EUR', weight: 0.82 },
  { countryIso: 'CY', country: 'Cyprus', currency: 'EUR', weight: 0.13 },
  { countryIso: 'BG', country: 'Bulgaria', currency: 'BGN', weight: 0.05 },
] as const;

type Home = (typeof HOMES)[number];

/** Share of customers who also shop in a second country (a second wallet), and of their postings booked there. */
const TWO_WALLETS = 0.15;
const AWAY_POSTINGS = 0.3;

export { POSTING_TYPE };
const PURCHASE = POSTING_TYPE.purchase;
const REDEMPTION = POSTING_TYPE.redemption;
const BONUS = POSTING_TYPE.bonus;

const CACHED_CUSTOMERS = 64;

/**
 * Loyalty postings, generated per customer from (seed, customer) alone. About 15% of customers have
 * none, one in a hundred has a long history (300–700 postings), and about 3% of postings are followed
 * by an exact duplicate. Postings fall between the customer's creation and the end of the data range.
 * About 15% of customers book some postings in a second country (a second wallet). A redemption never
 * takes more than its wallet holds at that instant, expired points gone ({@link PointsLedger}).
 */
export class PostingLedger {
  private readonly cache = new Map<number, readonly Posting[]>();

  constructor(
    private readonly directory: CustomerDirectory,
    private readonly rangeEndMs: number,
    private readonly days: LocalDays,
  ) {}

  /** Postings of customer `i`, oldest first (cached; meant for paging one customer). */
  postingsOf(i: number): readonly Posting[] {
    let postings = this.cache.get(i);
    if (postings) {
      this.cache.delete(i);
    } else {
      postings = this.generate(i);
      if (this.cache.size >= CACHED_CUSTOMERS) this.cache.delete(this.cache.keys().next().value!);
    }
    this.cache.set(i, postings);
    return postings;
  }

  /** Whether customer `i` is one of the long-history customers. */
  hasLongHistory(i: number): boolean {
    // A fixed stride rather than a coin flip, so even a small dataset has some.
    return (i + (this.directory.timeline.seed % 100)) % 100 === 0;
  }

  /** Postings of customer `i`, oldest first, without touching the cache. */
  generate(i: number): Posting[] {
    const random = randomFor(this.directory.timeline.seed, Stream.postings, i);
    const count = this.hasLongHistory(i)
      ? random.int(300, 700)
      : random.chance(0.15)
        ? 0
        : 1 + Math.floor(random.next() ** 2 * 40);
    if (count === 0) return [];
    const createdMs = this.directory.createdAt(i);
    const span = this.rangeEndMs - createdMs - 1000;
    const times = new Float64Array(count);
    for (let n = 0; n < count; n++) times[n] = createdMs + 1000 + Math.floor(random.next() * span);
    times.sort();
    const home = pickHome(random);
    // Where each posting is booked is drawn from a stream of its own, so the draws above stay as they were.
    const places = randomFor(this.directory.timeline.seed, Stream.postingWallets, i);
    const away = places.chance(TWO_WALLETS) ? places.pick(HOMES.filter((h) => h !== home)) : null;
    const ledger = new PointsLedger(this.days);
    const postings: Posting[] = [];
    let earned = 0;
    for (let n = 0; n < count; n++) {
      const postedMs = times[n]!;
      const where: Home = away && places.chance(AWAY_POSTINGS) ? away : home;
      ledger.advanceTo(postedMs);
      const balance = PointsLedger.balance(ledger.wallet(where.countryIso, where.currency, where.country)) / 100;
      const tier = tierFor(earned);
      const brand = random.pick(BRANDS);
      const redeem = balance >= 20 && random.chance(0.2);
      const bonus = !redeem && random.chance(0.1);
      const awardOn = redeem || bonus ? null : random.decimal(3, 250, 2);
      const credit = redeem ? 0 : bonus ? random.pick([25, 50, 100]) : roundTo(awardOn! * earnMultiplier(tier), 2);
      const debit = redeem ? random.decimal(10, Math.min(balance, 500), 2) : 0;
      earned = roundTo(earned + credit, 2);
      const posting: Posting = {
        postedMs,
        txnMs: Math.max(createdMs, postedMs - random.int(0, 36 * 3600) * 1000 - random.int(0, 999)),
        credit,
        creditValue: roundTo(credit * POINT_VALUE, 4),
        debit,
        debitValue: roundTo(debit * POINT_VALUE, 4),
        awardOn,
        currency: where.currency,
        receipt: `R${this.directory.customerId(i).slice(1)}-${String(n + 1).padStart(4, '0')}`,
        branchName: random.pick(brand.branches),
        brandName: brand.name,
        countryIso: where.countryIso,
        country: where.country,
        tierOrder: tier.order,
        tierName: tier.name,
        type: redeem ? REDEMPTION : bonus ? BONUS : PURCHASE,
        postingType: redeem ? 2 : 1,
      };
      postings.push(posting);
      ledger.apply(posting);
      // The source sometimes books the very same posting twice; both copies are served (and both count), but
      // never a redemption the wallet could not pay twice.
      if (random.chance(0.03) && debit * 2 <= balance) {
        postings.push({ ...posting });
        ledger.apply(posting);
      }
    }
    return postings;
  }
}

function pickHome(random: Random): Home {
  let r = random.next();
  for (const home of HOMES) {
    if (r < home.weight) return home;
    r -= home.weight;
  }
  return HOMES[0];
}

/** A posting as served by `GET /accounts/loyalty/postings`. */
export function renderPosting(posting: Posting): Record<string, unknown> {
  return {
    tierOrder: posting.tierOrder,
    tierName: posting.tierName,
    credit: posting.credit,
    creditValue: posting.creditValue,
    debit: posting.debit,
    debitValue: posting.debitValue,
    awardOn: posting.awardOn,
    currency: posting.currency,
    postingDate: formatPostingTime(posting.postedMs),
    txnDate: formatPostingTime(posting.txnMs),
    receipt: posting.receipt,
    branchName: posting.branchName,
    brandName: posting.brandName,
    countryIso: posting.countryIso,
    country: posting.country,
    type: posting.type,
    postingType: posting.postingType,
  };
}

/** The canonical (warehouse) form of a posting. */
export function truthPosting(customerId: string, posting: Posting): TruthPosting {
  return {
    customer_id: customerId,
    posted_at: isoUtc(posting.postedMs),
    txn_at: isoUtc(posting.txnMs),
    credit: posting.credit,
    credit_value: posting.creditValue,
    debit: posting.debit,
    debit_value: posting.debitValue,
    award_on: posting.awardOn,
    currency: posting.currency,
    receipt: posting.receipt,
    branch_name: posting.branchName,
    brand_name: posting.brandName,
    country_iso: posting.countryIso,
    country: posting.country,
    tier_order: posting.tierOrder,
    tier_name: posting.tierName,
    type: posting.type,
    posting_type: posting.postingType,
  };
}
