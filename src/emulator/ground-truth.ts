import type { TruthAccount } from './model/account-export.js';
import { ActivityOverlay } from './model/activity-overlay.js';
import type { ExportWindow } from './model/export-window.js';
import { EMPTY_WINDOW, type TruthFieldReject } from './model/export-window.js';
import { truthPosting, type TruthPosting } from './model/posting-ledger.js';
import type { SourceData } from './model/source-data.js';
import { SURVEYS, questionMap } from './model/survey-catalog.js';
import type { TruthSurveyResponse } from './model/survey-export.js';
import { parseDay } from './model/calendar.js';
import {
  type TruthBalanceDetail,
  type TruthLoyalty,
  type TruthLoyaltyStatus,
  type TruthLoyaltyWallet,
  loyaltyTruth,
  voucherTruth,
} from './model/loyalty-truth.js';
import type { TruthVoucher } from './model/vouchers.js';

export type {
  TruthAccount,
  TruthBalanceDetail,
  TruthFieldReject,
  TruthLoyalty,
  TruthLoyaltyStatus,
  TruthLoyaltyWallet,
  TruthPosting,
  TruthSurveyResponse,
  TruthVoucher,
};

/** A malformed record an export served whose key cannot be read (or that is no record), and why it must be rejected. */
export interface TruthReject {
  /** The record exactly as served (parse of its JSON). */
  payload: unknown;
  reason: string;
}

/** Identity of a customer, as postings lookups need it. */
export interface TruthCustomer {
  customer_id: string;
  phone: string | null;
  email: string | null;
}

/**
 * What a correct warehouse must hold, independent of how the source rendered it: "NULL", "" and null are
 * all null, timestamps are ISO UTC. Windows are inclusive `YYYY-MM-DD` days in the source's zone; each
 * method throws a RangeError on a malformed day and streams its rows lazily.
 */
export interface GroundTruth {
  /**
   * Latest version (as of the last change in [start, end]) of every customer created or modified in
   * [start, end], modifications written by clients included.
   */
  accounts(start: string, end: string): Iterable<TruthAccount>;
  /** Every answer record dated in [start, end]. */
  surveyResponses(start: string, end: string): Iterable<TruthSurveyResponse>;
  /**
   * Every posting whose postingDate falls on a day in [start, end], of every customer the postings endpoint can be
   * asked about (a customer with neither phone nor e-mail cannot); duplicates and written ones included.
   */
  postings(start: string, end: string): Iterable<TruthPosting>;
  /** Malformed records served by the exports for [start, end] that must be rejected whole. */
  rejects(stream: 'accounts' | 'surveys', start: string, end: string): Iterable<TruthReject>;
  /**
   * The fields of malformed records served by the exports for [start, end] that cannot be read while their records
   * can: each record is in `accounts` or `surveyResponses` with that field NULL, and the field here, its raw value as
   * JSON text.
   */
  fieldRejects(stream: 'accounts' | 'surveys', start: string, end: string): Iterable<TruthFieldReject>;
  /** All customers created on or before `throughDay`. */
  customers(throughDay: string): Iterable<TruthCustomer>;
  /** The surveys' question sets (question text -> code). */
  surveys(): Array<{ questions: Record<string, string> }>;
  /**
   * The loyalty status (`GET /accounts?includeLoyalty=true`) of every customer created by `asOfMs` (default:
   * the emulator's clock now), as of then, each with its wallets and balance details; in customer order.
   */
  loyaltyStatus(asOfMs?: number): Iterable<TruthLoyalty>;
  /** The wallets of {@link loyaltyStatus}, flat (customer × country × currency). */
  loyaltyWallets(asOfMs?: number): Iterable<TruthLoyaltyWallet>;
  /** The balance details of {@link loyaltyStatus}, flat (customer × expiry). */
  loyaltyBalanceDetails(asOfMs?: number): Iterable<TruthBalanceDetail>;
  /** The vouchers (`GET /accounts/vouchers/get`) every customer created by `asOfMs` holds then (customer × code). */
  vouchers(asOfMs?: number): Iterable<TruthVoucher>;
}

/**
 * The ground truth of a dataset and, when given, of what clients wrote on top of it (`activity`): written
 * profile changes are in `accounts`, written postings in `postings` and in the loyalty state. It reads the
 * overlay at each call. `now` is the emulator's clock: the default instant of the loyalty state and vouchers.
 */
export function groundTruthOf(data: SourceData, activity?: ActivityOverlay, now: () => number = Date.now): GroundTruth {
  const overlay = activity ?? new ActivityOverlay(data);
  const span = (start: string, end: string) => {
    if (parseDay(start) === null || parseDay(end) === null) throw new RangeError(`not a day range: ${start}..${end}`);
    return data.calendar.span(start, end);
  };
  const windowOf = <T>(
    source: { window(first: number, last: number): ExportWindow<T> },
    start: string,
    end: string,
  ): ExportWindow<T> => {
    const days = span(start, end);
    return days ? source.window(days.first, days.last) : EMPTY_WINDOW;
  };
  return {
    accounts: (start, end) => {
      if (!activity) return validRows(windowOf(data.accounts, start, end));
      span(start, end);
      return validRows(activity.accountsWindow(start, end));
    },
    surveyResponses: (start, end) => validRows(windowOf(data.surveys, start, end)),
    rejects: (stream, start, end) =>
      rejectsOf(windowOf<unknown>(stream === 'accounts' ? data.accounts : data.surveys, start, end)),
    fieldRejects: (stream, start, end) =>
      fieldRejectsOf(windowOf<unknown>(stream === 'accounts' ? data.accounts : data.surveys, start, end)),
    postings: (start, end) => {
      const seeded = postingsIn(data, span(start, end));
      return activity ? concat(seeded, activity.writtenPostings(start, end)) : seeded;
    },
    customers: (throughDay) => customersThrough(data, throughDay),
    surveys: () => SURVEYS.map((survey) => ({ questions: questionMap(survey) })),
    loyaltyStatus: (asOfMs = now()) => loyaltyTruth(overlay, asOfMs),
    loyaltyWallets: (asOfMs = now()) => flat(loyaltyTruth(overlay, asOfMs), (c) => c.wallets),
    loyaltyBalanceDetails: (asOfMs = now()) => flat(loyaltyTruth(overlay, asOfMs), (c) => c.balance_details),
    vouchers: (asOfMs = now()) => voucherTruth(overlay, asOfMs),
  };
}

function* flat<T, U>(rows: Iterable<T>, parts: (row: T) => Iterable<U>): Generator<U> {
  for (const row of rows) yield* parts(row);
}

function* concat<T>(...parts: Iterable<T>[]): Generator<T> {
  for (const part of parts) yield* part;
}

function* validRows<T>(window: ExportWindow<T>): Generator<T> {
  for (let p = 0; p < window.totalCount; p++) {
    const entry = window.canonical(p);
    if ('rows' in entry) yield* entry.rows;
  }
}

function* rejectsOf(window: ExportWindow<unknown>): Generator<TruthReject> {
  for (let p = 0; p < window.totalCount; p++) {
    const entry = window.canonical(p);
    if ('reason' in entry) yield { payload: window.served(p), reason: entry.reason };
  }
}

function* fieldRejectsOf(window: ExportWindow<unknown>): Generator<TruthFieldReject> {
  for (let p = 0; p < window.totalCount; p++) {
    const entry = window.canonical(p);
    if ('rows' in entry && entry.fieldRejects) yield* entry.fieldRejects;
  }
}

function* postingsIn(data: SourceData, days: { first: number; last: number } | null): Generator<TruthPosting> {
  if (!days) return;
  const through = data.timeline.firstCreatedOn(days.last + 1);
  for (let i = 0; i < through; i++) {
    if (data.directory.isContactless(i)) continue;
    const customerId = data.directory.customerId(i);
    for (const posting of data.postings.generate(i)) {
      const day = data.calendar.indexAt(posting.postedMs);
      if (day >= days.first && day <= days.last) yield truthPosting(customerId, posting);
    }
  }
}

function customersThrough(data: SourceData, throughDay: string): Generator<TruthCustomer> {
  if (parseDay(throughDay) === null) throw new RangeError(`not a day: ${throughDay}`);
  const through = data.timeline.firstCreatedOn(data.calendar.indexOf(throughDay) + 1);
  return (function* () {
    for (let i = 0; i < through; i++) {
      const { customerId, phone, email } = data.directory.base(i);
      yield { customer_id: customerId, phone, email };
    }
  })();
}
