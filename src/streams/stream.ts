import type { JobSettings, StreamName } from '../plan/job-plan.js';
import type { ChoiceListForm, FieldDefinitions } from '../transform/choice-lists.js';
import type { Row, TableSpec } from '../load/table-spec.js';
import type { Logger } from '../log/logger.js';
import type { CustomerRule } from '../plan/customer-rule.js';
import type { Day } from '../plan/days.js';
import type { Window } from '../plan/windows.js';
import type { CustomerIdentity, LoyaltyApi } from '../source/loyalty-api.js';

/** What a stream may use while it extracts and normalizes. It knows nothing of the command line. */
export interface StreamContext {
  api: LoyaltyApi;
  pageSize: number;
  /** Requests a stream may keep in flight (source.concurrency). */
  concurrency: number;
  /** Zone of zone-less source timestamps and of window days. */
  timezone: string;
  job: string;
  jobConfig: JobSettings;
  logger: Logger;
  /**
   * For a per-customer stream: the customers the pipeline selected for the span, in key order; `readFrom`, for a
   * customer the postings sweep takes, is the first day whose postings it keeps.
   */
  customers?: AsyncIterable<SelectedCustomer>;
  /** For a stream that declares `fieldDefinitions`: the custom fields' definitions, as `profile_fields` holds them. */
  fieldDefinitions?: FieldDefinitions;
  /** How the options of a multiple-choice field travel in its one string (`source.multiple_choice`). */
  choiceLists?: ChoiceListForm;
}

/** A customer the pipeline selected for a span; `readFrom`, for one the postings sweep takes, is the first day kept. */
export type SelectedCustomer = CustomerIdentity & { readFrom?: Day | undefined };

/** Raw records of one window as they came from the source. */
export interface ExtractedBatch {
  windowStart: Day;
  records: unknown[];
  /**
   * Everything extracted for this batch's window before this batch is to be dropped: the window's listing is being
   * read again (the span's other windows stay). The window's normalizer starts afresh, so occurrence numbers count
   * the records of the read that is kept; the normalizers of the span's other windows keep their counts.
   */
  restart: boolean;
  /** On a restart: why the previous read could not be kept. */
  reason?: string;
  /**
   * What the extractor itself rejects, filed under this batch's window: a customer the service cannot be asked
   * about. They land in `_etl_rejects` like rejected records, but are no records of the window, so they do not
   * count toward the reject threshold.
   */
  rejects?: ReadonlyArray<{ payload: unknown; error: string }>;
  /**
   * This window's listing has been read to its end: no batch of it follows. When reading stops with an error,
   * the windows at the start of the span marked complete are committed rather than lost.
   */
  windowComplete?: boolean;
  /**
   * Customers asked by a stream that records its observations besides its records (postings): staged into
   * `_etl_customer_observations`, no records of the window.
   */
  observed?: CustomerObservation[];
}

/** A customer asked, when, and what the service answered (see `_etl_customer_observations`). */
export interface CustomerObservation {
  customerId: string;
  observedAt: string;
  outcome: 'answered' | 'not_found' | 'unaskable';
}

/** A record turned into warehouse rows: table name → rows. */
export type NormalizedRecord = Record<string, Row[]>;

/**
 * A stream, declared: its tables (the first is its main table), how it extracts a span of windows, and how
 * it turns one raw record into rows. Normalizing is pure: record in, rows out, or a RecordError.
 */
export interface StreamDefinition {
  readonly name: StreamName;
  readonly tables: TableSpec[];
  /** For a per-customer stream: which customers a span asks (the pipeline selects them before the span opens). */
  customerRule?(job: JobSettings): CustomerRule;
  /** Most windows one span may hold: 1 for listings filtered by window; more where one fetch serves many. */
  maxWindowsPerSpan(job: JobSettings): number;
  /**
   * Spans of the stream a worker loads at once (one lane a span), for a run of `concurrency`. Where a span reads
   * one window after another, lanes are what keeps that many requests in flight; where one span alone keeps
   * them in flight, more lanes only hold more spans' rows staged.
   */
  lanes(concurrency: number): number;
  /** The stream reads custom field values by their definitions: the pipeline hands it `fieldDefinitions`. */
  readonly fieldDefinitions?: boolean;
  extract(ctx: StreamContext, span: Window[]): AsyncIterable<ExtractedBatch>;
  /**
   * How many records the source lists for a whole range of days, in one request, where its listing is filtered
   * by date (the listing's `totalCount`). A stretch of windows counted 0 is recorded done without reading each.
   */
  countRange?(api: LoyaltyApi, range: Window): Promise<number>;
  /**
   * A normalizer for one window of a span (the pipeline makes one per window, on its first record, and a new one
   * when the window is read again); it may count occurrences across the window's records.
   */
  normalizer(ctx: StreamContext): (raw: unknown, windowStart: Day) => NormalizedRecord;
}
