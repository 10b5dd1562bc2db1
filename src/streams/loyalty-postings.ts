import { z } from 'zod';
import type { CustomerReject } from '../extract/askable-customer.js';
import {
  readCustomerPostings,
  SpanDays,
  type CustomerPostings,
  type PostingRecord,
} from '../extract/customer-postings.js';
import { UNLISTED_COLUMN, type TableSpec } from '../load/table-spec.js';
import type { Day } from '../plan/days.js';
import type { Window } from '../plan/windows.js';
import { contentKey } from '../transform/keys.js';
import { OccurrenceKeys } from '../transform/occurrences.js';
import { FIELD_REJECTS, LenientFields } from '../transform/field-problems.js';
import { RecordError } from '../transform/record-error.js';
import { parseSourceTimestamp } from '../transform/timestamps.js';
import { UNLISTED, unlistedJson, unlistedMembers } from '../transform/unlisted.js';
import { askEachCustomer, type CustomerFanOut } from './customer-fan-out.js';
import { customerObservationsTable } from './customer-observations.js';
import type {
  CustomerObservation,
  ExtractedBatch,
  NormalizedRecord,
  StreamContext,
  StreamDefinition,
} from './stream.js';
import { zodProblem } from './zod-problem.js';

/**
 * A posting as listed for its customer: only what keys it is checked here, its customer and its `postingDate` (which
 * files it under its window); its other fields are read one by one, leniently (see `postingNormalizer`).
 */
const recordSchema = z.object({ customerId: z.string(), posting: z.looseObject({ postingDate: z.string() }) });

/** The members of a posting the spec lists. */
export const POSTING_MEMBERS: ReadonlySet<string> = new Set([
  'tierOrder',
  'tierName',
  'credit',
  'creditValue',
  'debit',
  'debitValue',
  'awardOn',
  'currency',
  'postingDate',
  'txnDate',
  'receipt',
  'branchName',
  'brandName',
  'countryIso',
  'country',
  'type',
  'postingType',
]);

export const loyaltyPostingsTable: TableSpec = {
  name: 'loyalty_postings',
  key: ['posting_id'],
  merge: { kind: 'upsert' },
  columns: [
    { name: 'posting_id', type: 'text' },
    { name: 'customer_id', type: 'text' },
    { name: 'posted_at', type: 'timestamptz' },
    { name: 'txn_at', type: 'timestamptz' },
    { name: 'credit', type: 'decimal' },
    { name: 'credit_value', type: 'decimal' },
    { name: 'debit', type: 'decimal' },
    { name: 'debit_value', type: 'decimal' },
    { name: 'award_on', type: 'decimal' },
    { name: 'currency', type: 'text' },
    { name: 'receipt', type: 'text' },
    { name: 'branch_name', type: 'text' },
    { name: 'brand_name', type: 'text' },
    { name: 'country_iso', type: 'text' },
    { name: 'country', type: 'text' },
    { name: 'tier_order', type: 'integer' },
    { name: 'tier_name', type: 'text' },
    { name: 'type', type: 'integer' },
    { name: 'posting_type', type: 'integer' },
    UNLISTED_COLUMN,
  ],
  recordType: 'posting',
};

/**
 * A normalizer for one window of postings. `posting_id` is the content key of the customer and every field of
 * the normalized posting; the n-th exact duplicate gets a key derived from it and n, so two identical
 * postings stay two rows and keep their ids on every re-run.
 *
 * Exact duplicates belong to one customer (the customer is part of the content) and one window (so is the
 * posting's instant: the stream files a posting under the window of its `postingDate`), so counting per window
 * counts every duplicate a span would, and the ids do not depend on the span. The stream hands over a customer's
 * postings of a window one after the other: the count starts afresh with each customer, so memory holds the keys
 * of one customer's postings rather than a window's.
 */
export function postingNormalizer(timezone: string): (raw: unknown) => NormalizedRecord {
  let keys = new OccurrenceKeys();
  let keysOf: string | undefined;
  return (raw) => {
    const parsed = recordSchema.safeParse(raw);
    if (!parsed.success) throw new RecordError('', zodProblem(parsed.error).replace(/^posting\./, ''));
    const { customerId, posting: p } = parsed.data;
    if (customerId !== keysOf) {
      keys = new OccurrenceKeys();
      keysOf = customerId;
    }
    const posting = p as Record<string, unknown>;
    const fields = new LenientFields();
    const decimal = (field: string) => fields.decimal(field, posting[field]);
    const text = (field: string) => fields.text(field, posting[field]);
    const integer = (field: string) => fields.integer(field, posting[field]);
    const row = {
      customer_id: customerId,
      posted_at: parseSourceTimestamp(p.postingDate, timezone, 'postingDate'),
      txn_at: fields.timestamp('txnDate', posting.txnDate, timezone),
      credit: decimal('credit'),
      credit_value: decimal('creditValue'),
      debit: decimal('debit'),
      debit_value: decimal('debitValue'),
      award_on: decimal('awardOn'),
      currency: text('currency'),
      receipt: text('receipt'),
      branch_name: text('branchName'),
      brand_name: text('brandName'),
      country_iso: text('countryIso'),
      country: text('country'),
      tier_order: integer('tierOrder'),
      tier_name: text('tierName'),
      type: integer('type'),
      posting_type: integer('postingType'),
    };
    // an unreadable value is part of the content: two postings differing only there keep two ids
    const problems = fields.failed ? [fields.keyPart()] : [];
    const postingId = keys.next(contentKey('posting', ...Object.values(row), ...problems));
    // the unlisted members are no part of the key: a member the service starts sending does not make a posting new
    const unlisted = unlistedJson(unlistedMembers((raw as { posting: unknown }).posting, POSTING_MEMBERS));
    const out: NormalizedRecord = { loyalty_postings: [{ posting_id: postingId, ...row, [UNLISTED]: unlisted }] };
    if (fields.failed) out[FIELD_REJECTS] = fields.rows(postingId);
    return out;
  };
}

/** Postings are staged in batches of about this many records. */
const BATCH = 1000;
/** Spans of postings a worker loads at once, at most: see `lanes`. */
const POSTINGS_LANES = 2;

/**
 * The loyalty postings stream. Postings have no date filter: for a span of windows it asks each customer the
 * pipeline selected once (`jobs.<job>.postings.customers`: all, changed, or those named by webhook events), keeps the postings dated in the span and files each under
 * its window. Spans hold up to `postings.max_span_days` days, so a backfill asks each customer once per span.
 */
export const loyaltyPostingsStream: StreamDefinition = {
  name: 'loyalty_postings',
  tables: [loyaltyPostingsTable, customerObservationsTable],
  customerRule: (job) => ({
    kind: job.postings.customers,
    sweep:
      job.postings.sweep_days === undefined
        ? undefined
        : {
            sweepDays: job.postings.sweep_days,
            firstNightSweep: job.first_night === 'sweep',
            firstDay: job.first_day,
            lookbackDays: job.lookback_days,
          },
  }),
  maxWindowsPerSpan: (job) => Math.max(1, Math.floor(job.postings.max_span_days / job.window_days)),
  /**
   * A span asks `source.concurrency` customers at once, so one lane keeps the requests flowing; a second one
   * fetches while the other commits. More would not fetch faster, only stage more spans at a time, whose commits
   * would raise the peak memory together.
   */
  lanes: (concurrency) => Math.min(concurrency, POSTINGS_LANES),
  async *extract(ctx: StreamContext, span): AsyncGenerator<ExtractedBatch> {
    const days = new SpanDays(span, ctx.timezone, {
      firstDay: ctx.jobConfig.first_day,
      windowDays: ctx.jobConfig.window_days,
    });
    yield* askEachCustomer(ctx, span, postingsFanOut(ctx, span, days));
  },
  normalizer: (ctx) => postingNormalizer(ctx.timezone),
};

/** One customer's postings of a span, as the stream takes them. */
interface CustomerListing extends CustomerPostings {
  customerId: string;
  /** The instant its answer arrived, which the raw archive keeps with it: a replay observes the customer then too. */
  observedAt: string;
}

/**
 * The postings stream's side of the fan-out, for one span: each customer's postings are filed under their windows,
 * and the customer under `_etl_customer_observations`; a customer the sweep takes keeps its postings since it was
 * last asked, not only the span's.
 */
function postingsFanOut(ctx: StreamContext, span: Window[], days: SpanDays): CustomerFanOut<CustomerListing> {
  const buffer = new Map<Day, PostingRecord[]>();
  /** Customers the service cannot be asked about: rejected under the span's first window. */
  const rejects: CustomerReject[] = [];
  /** Customers asked, for `_etl_customer_observations`: what the sweep orders by, and what a window's ledger counts. */
  const observed: CustomerObservation[] = [];
  let buffered = 0;
  let stoppedEarly = 0;
  let readAgain = 0;
  function* flush(): Generator<ExtractedBatch> {
    if (rejects.length > 0)
      yield { windowStart: span[0]!.start, records: [], restart: false, rejects: rejects.splice(0) };
    if (observed.length > 0)
      yield { windowStart: span.at(-1)!.start, records: [], restart: false, observed: observed.splice(0) };
    for (const [windowStart, records] of buffer) yield { windowStart, records, restart: false };
    buffer.clear();
    buffered = 0;
  }
  return {
    stream: 'loyalty_postings',
    async ask(customer) {
      const listing = await readCustomerPostings(ctx.api, customer, days.from(customer.readFrom), ctx.pageSize);
      return { customerId: customer.customerId, observedAt: ctx.api.observedAt(customer), ...listing };
    },
    // A listing's postings enter the buffer together and in order, so each window's batch holds a customer's
    // postings of that window one after the other (the normalizer counts exact duplicates per customer).
    *take(listing) {
      observed.push({
        customerId: listing.customerId,
        observedAt: listing.observedAt,
        outcome: listing.rejected ? 'unaskable' : 'answered',
      });
      if (listing.rejected) rejects.push(listing.rejected);
      if (listing.stoppedEarly) stoppedEarly++;
      if (listing.readAgain.length > 0) {
        readAgain++;
        ctx.logger.debug(
          { stream: 'loyalty_postings', reasons: listing.readAgain },
          'postings of a customer changed while they were read; read again',
        );
      }
      for (const { windowStart, record } of listing.kept) {
        let list = buffer.get(windowStart);
        if (!list) buffer.set(windowStart, (list = []));
        list.push(record);
        buffered++;
      }
      if (buffered >= BATCH || observed.length >= BATCH) yield* flush();
    },
    rest: flush,
    summary: () => ({ message: 'postings listed', counts: { stoppedEarly, readAgain } }),
  };
}
