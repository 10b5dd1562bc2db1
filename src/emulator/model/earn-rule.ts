import { POINT_VALUE, earnMultiplier } from './loyalty-tiers.js';
import { loyaltyStanding } from './loyalty-summary.js';
import type { Posting } from './posting.js';
import { POSTING_TYPE } from './posting-type.js';
import { roundTo } from './random.js';

/** Where a sale was made: a point-of-sale transaction (6) or an e-commerce purchase (14). */
export type SaleChannel = 'store' | 'online';

/** What a sale's postings are made of. */
export interface Sale {
  receipt: string;
  channel: SaleChannel;
  /** Net paid in money (`paid`): what earns points. */
  paid: number;
  /** Net paid in loyalty redemption (`redeemed`), in money: what is debited, at the point value. */
  redeemed: number;
  /** The transaction's `closeTime`. */
  txnMs: number;
  /** When the source booked it: the request's time. */
  postedMs: number;
  /** The POS terminal (`deviceName`), shown as the branch of a store sale. */
  deviceName: string | null;
}

/** Brand and branch of the postings of each channel. */
const CHANNELS: Record<SaleChannel, { brandName: string; branchName: string }> = {
  store: { brandName: 'Loyalty Club Stores', branchName: 'Store' },
  online: { brandName: 'Loyalty Club Online', branchName: 'Web shop' },
};

/** Points worth `money` at the point value, to the cent of a point. */
export function pointsWorth(money: number): number {
  return roundTo(money / POINT_VALUE, 2);
}

/**
 * The postings a sale books on a customer with postings `history` (oldest first). The earn rule: the amount
 * paid in money earns `paid × multiplier` points (1 in Bronze, 1.25 in Silver, 1.5 in Gold, 1.75 in
 * Platinum, the tier held before the sale), `awardOn` being `paid`; an amount paid by redemption debits
 * `redeemed / 0.05` points. The debit comes first, then the credit; either is left out when its amount is 0.
 * Both go to the customer's home wallet (that of their first posting).
 */
export function salePostings(history: readonly Posting[], sale: Sale): Posting[] {
  const { tier, home: wallet } = loyaltyStanding(history);
  const channel = CHANNELS[sale.channel];
  const base = {
    postedMs: sale.postedMs,
    txnMs: sale.txnMs,
    currency: wallet.currency,
    receipt: sale.receipt,
    branchName: sale.channel === 'store' && sale.deviceName ? sale.deviceName : channel.branchName,
    brandName: channel.brandName,
    countryIso: wallet.countryIso,
    country: wallet.countryName ?? 'Greece',
    tierOrder: tier.order,
    tierName: tier.name,
  };
  const postings: Posting[] = [];
  if (sale.redeemed > 0) {
    const debit = pointsWorth(sale.redeemed);
    postings.push({
      ...base,
      credit: 0,
      creditValue: 0,
      debit,
      debitValue: roundTo(debit * POINT_VALUE, 4),
      awardOn: null,
      type: POSTING_TYPE.redemption,
      postingType: 2,
    });
  }
  if (sale.paid > 0) {
    const awardOn = roundTo(sale.paid, 2);
    const credit = roundTo(awardOn * earnMultiplier(tier), 2);
    postings.push({
      ...base,
      credit,
      creditValue: roundTo(credit * POINT_VALUE, 4),
      debit: 0,
      debitValue: 0,
      awardOn,
      type: POSTING_TYPE.purchase,
      postingType: 1,
    });
  }
  return postings;
}

/**
 * The postings of a rollback: every posting the sale booked, reversed (its credit debited, its redemption
 * credited back), dated at the rollback's request time, with the tier held at that time. The original
 * postings stay: the source's listing is a ledger, never rewritten.
 */
export function reversalPostings(
  history: readonly Posting[],
  booked: readonly Posting[],
  txnMs: number,
  postedMs: number,
): Posting[] {
  const { tier } = loyaltyStanding(history);
  return [...booked].reverse().map((p) => ({
    ...p,
    postedMs,
    txnMs,
    credit: p.debit,
    creditValue: p.debitValue,
    debit: p.credit,
    debitValue: p.creditValue,
    awardOn: null,
    tierOrder: tier.order,
    tierName: tier.name,
    type: POSTING_TYPE.rollback,
    postingType: p.credit > 0 ? 2 : 1,
  }));
}
