import type { Day } from './days.js';

/** The streams this tool knows how to extract. */
export const STREAM_NAMES = ['accounts', 'surveys', 'loyalty_postings', 'loyalty_status', 'vouchers'] as const;
export type StreamName = (typeof STREAM_NAMES)[number];

/** Streams that ask the source customer by customer, so they need the customer directory that `accounts` keeps. */
export const PER_CUSTOMER_STREAMS: readonly StreamName[] = ['loyalty_postings', 'loyalty_status', 'vouchers'];

/** Which customers the loyalty_postings stream asks about in a window. */
export const POSTINGS_SELECTIONS = ['all', 'changed', 'webhook'] as const;
export type PostingsSelection = (typeof POSTINGS_SELECTIONS)[number];

/**
 * One job's block of `jobs.yaml`, with its defaults filled. The keys are the file's, so each setting is found
 * under the name its documentation uses.
 */
export interface JobSettings {
  streams: StreamName[];
  window_days: number;
  lookback_days: number;
  first_day: Day;
  reject_threshold: number;
  /** Nights within which the state streams ask every customer at least once. */
  sweep_days: number;
  /** Streams whose history is turned off (`false`); a stream not named keeps its history. */
  history?:
    | { accounts?: boolean | undefined; loyalty_status?: boolean | undefined; vouchers?: boolean | undefined }
    | undefined;
  /**
   * `sweep_days`: with `changed` or `webhook`, each night also asks the customers whose postings were asked longest
   * ago, so every customer's postings are read at least once in this many nights.
   */
  postings: { customers: PostingsSelection; max_span_days: number; sweep_days?: number | undefined };
  /**
   * `all` (the default): the first night asks the postings of every customer; `sweep`: it asks the customers with
   * a sign of change and the sweep's quota, and leaves the others to the following nights' sweep.
   */
  first_night?: FirstNight | undefined;
}

/** Whether the source's exports include their `end` day (`source.export_end`). */
export type ExportEnd = 'inclusive' | 'exclusive';

/** How the options of a multiple-choice custom field travel in one string (`source.multiple_choice`). */
export type MultipleChoice = 'auto' | 'comma' | 'semicolon' | 'pipe' | 'json';

/** What a job's first night asks of the postings (`jobs.<name>.first_night`). */
export const FIRST_NIGHTS = ['all', 'sweep'] as const;
export type FirstNight = (typeof FIRST_NIGHTS)[number];

/** Spans in a row without an answer after which a run takes the source for gone (`source.stop_after_no_answer`). */
export const DEFAULT_STOP_AFTER_NO_ANSWER = 3;

/** The `source` block of `jobs.yaml`, with its defaults filled and the environment's overrides applied. */
export interface SourceSettings {
  base_url: string;
  auth: { header: string; prefix: string; token: string };
  integration_token: string;
  timezone: string;
  history_start: Day;
  page_size: number;
  export_end: ExportEnd;
  first_page: 0 | 1;
  multiple_choice: MultipleChoice;
  concurrency: number;
  requests_per_second: number;
  retries: number;
  timeout_ms: number;
  /** The largest answer read, in bytes of its body. */
  max_response_bytes: number;
  backoff_base_ms: number;
  backoff_max_ms: number;
  stop_after_no_answer: number;
}

/** A DuckDB warehouse file, as the `destination` block of `jobs.yaml` states it. */
export interface DuckdbSettings {
  type: 'duckdb';
  path: string;
  schema: string;
  memory_limit?: string | undefined;
  checkpoint_threshold?: string | undefined;
  threads?: number | undefined;
  staging_memory?: string | undefined;
  publish_path?: string | false | undefined;
  event_spool?: string | undefined;
  busy_timeout_s?: number | undefined;
  analysts?: AnalystsSettings | undefined;
  archive?: ArchiveSettings | undefined;
}

/**
 * What analysts read of the customers' personal data, resolved: the policy, and under `hash` the key the hashes are
 * salted with (derived from `LOYALTY_PII_SALT`; a secret, never logged); `schema` is PostgreSQL's schema of views
 * for analysts.
 */
export interface AnalystsPolicy {
  personalData: 'keep' | 'hash' | 'drop';
  key?: string | undefined;
  schema?: string | undefined;
  /**
   * Whether what analysts read holds the pipeline's own `_etl_` tables too (`destination.analysts.pipeline_tables`);
   * by default it holds the data alone, and operators read the bookkeeping with `sql --pipeline`.
   */
  pipelineTables?: boolean | undefined;
}

/** `destination.analysts`: what analysts read of personal data, and (PostgreSQL) where. */
export interface AnalystsSettings {
  personal_data: 'keep' | 'hash' | 'drop';
  schema?: string | undefined;
  schema_contract?: SchemaContract | undefined;
  pipeline_tables?: boolean | undefined;
}

/**
 * `destination.analysts.schema_contract`, modelled on dlt's contract modes for a column's data type: what a commit
 * does when values no longer fit the type a published column has. A published column never loses its name or type
 * under any of them; `evolve` adds a column of the new type beside it, `discard_value` leaves those values NULL
 * (counted), `freeze` fails the commit. Every change is recorded in `_etl_schema_changes`.
 */
export type SchemaContract = 'evolve' | 'discard_value' | 'freeze';

/** `destination.archive`: `false` keeps no raw archive; otherwise where, how long and how much (docs/archive.md). */
export type ArchiveSettings =
  false | { path?: string | undefined; keep_days?: number | undefined; max_bytes?: number | undefined };

/** A PostgreSQL warehouse, as the `destination` block of `jobs.yaml` states it. */
export interface PostgresSettings {
  type: 'postgres';
  url: string;
  schema: string;
  analysts?: AnalystsSettings | undefined;
  /** Seconds a statement of the pipeline waits for a lock another session holds (default 300). */
  busy_timeout_s?: number | undefined;
  archive?: ArchiveSettings | undefined;
}

export type DestinationSettings = DuckdbSettings | PostgresSettings;

/**
 * What a run of one job needs, resolved once from `jobs.yaml` and the environment: the job's settings and the
 * parts of the source's and the run's settings the pipeline uses. Stages take this, never the jobs file.
 */
export interface JobPlan {
  /** The job's name in `jobs.yaml`: the key of its windows, watermarks and runs. */
  readonly name: string;
  readonly job: JobSettings;
  /** The program's first day (`source.history_start`): where the customer directory starts. */
  readonly historyStart: Day;
  /** Zone of zone-less source timestamps and of window days (`source.timezone`). */
  readonly timezone: string;
  readonly pageSize: number;
  /** Whether the exports include their `end` day (`source.export_end`); the source client asks accordingly. */
  readonly exportEnd: ExportEnd;
  /** The number of the source's first page (`source.first_page`); the source client numbers pages from it. */
  readonly firstPage: 0 | 1;
  /** How a multiple-choice custom field's options travel in its one string (`source.multiple_choice`). */
  readonly multipleChoice: MultipleChoice;
  /** Requests kept in flight to the source (`source.concurrency`). */
  readonly sourceConcurrency: number;
  /** The source's rate limit, shared by every worker of the warehouse (`source.requests_per_second`). */
  readonly requestsPerSecond: number;
  /** Seconds a run's claims outlive its last lease renewal, should its process die (`LOYALTY_LEASE_SECONDS`). */
  readonly leaseSeconds: number;
  /** `destination.analysts.schema_contract`; absent: `evolve`. */
  readonly schemaContract?: SchemaContract;
  /**
   * Spans of windows in a row that got no answer from the source after which the run stops asking it
   * (`source.stop_after_no_answer`; 0 or absent: never).
   */
  readonly stopAfterNoAnswer?: number;
  /** The source's address without credentials, to name it when it is gone. */
  readonly sourceUrl?: string;
}
