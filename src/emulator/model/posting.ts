/** One loyalty posting, canonical (instants in ms). */
export interface Posting {
  postedMs: number;
  txnMs: number;
  credit: number;
  creditValue: number;
  debit: number;
  debitValue: number;
  awardOn: number | null;
  currency: string;
  receipt: string;
  branchName: string;
  brandName: string;
  countryIso: string;
  country: string;
  tierOrder: number;
  tierName: string;
  type: number;
  postingType: number;
}
