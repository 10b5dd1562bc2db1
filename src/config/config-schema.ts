import { IANAZone } from 'luxon';
import { z } from 'zod';
import {
  FIRST_NIGHTS,
  PER_CUSTOMER_STREAMS,
  POSTINGS_SELECTIONS,
  STREAM_NAMES,
  DEFAULT_STOP_AFTER_NO_ANSWER,
  type DestinationSettings,
  type JobSettings,
  type SourceSettings,
} from '../plan/job-plan.js';
import { DUCKDB_SIZE } from '../plan/duckdb-size.js';
import { DEFAULT_MAX_RESPONSE_BYTES } from '../source/bounded-body.js';

/** Calendar day written as `YYYY-MM-DD`. */
export const isoDay = z
  .string()
  .regex(/^\d{4}-\d{2}-\d{2}$/, 'must be a day written YYYY-MM-DD')
  .refine(
    (s) => !Number.isNaN(Date.parse(`${s}T00:00:00Z`)) && new Date(`${s}T00:00:00Z`).toISOString().startsWith(s),
    'is not a real calendar day',
  );

const ianaZone = z
  .string()
  .refine((z) => IANAZone.isValidZone(z), 'must be an IANA time zone such as Europe/Athens or UTC');

/**
 * Where the customer directory sweep starts when `source.history_start` is not set: early enough for any loyalty
 * program, and cheap, since a stretch the source reports empty costs one request (see `skipEmptyStretches`).
 */
export const DEFAULT_HISTORY_START = '2000-01-01';

/** Nights within which the state streams (loyalty_status, vouchers) ask every customer at least once. */
export const DEFAULT_SWEEP_DAYS = 7;

const sourceSchema = z
  .object({
    base_url: z.url({ message: 'must be an http(s) URL' }),
    auth: z
      .object({
        header: z
          .string()
          .regex(/^[A-Za-z0-9-]+$/, 'must be an HTTP header name')
          .default('Authorization'),
        prefix: z.string().default(''),
        token: z.string().default(''),
      })
      .strict()
      .default({ header: 'Authorization', prefix: '', token: '' }),
    /** The integration token (`LOYALTY_INTEGRATION_TOKEN`): `check` and `probe` say which integration it names. */
    integration_token: z.string().default(''),
    timezone: ianaZone.default('UTC'),
    /**
     * The first day the service may hold data for: the loyalty program's start. The customer directory is swept
     * from here, so `accounts` knows every customer whatever a job's `first_day` says.
     */
    history_start: isoDay.default(DEFAULT_HISTORY_START),
    page_size: z.int().min(1).max(1000).default(500),
    /** Whether the exports' `end` day is included (the spec does not say): `exclusive` asks `end` = the day after. */
    export_end: z.enum(['inclusive', 'exclusive']).default('inclusive'),
    /** The number of the first page of every listing (the spec's samples start at 1). */
    first_page: z.union([z.literal(0), z.literal(1)]).default(1),
    /**
     * How the options of a multiple-choice custom field travel in one string (the spec does not say): `auto` reads
     * whatever can be read one way only; `comma`, `semicolon`, `pipe` or `json` is the service's one form.
     */
    multiple_choice: z.enum(['auto', 'comma', 'semicolon', 'pipe', 'json']).default('auto'),
    concurrency: z.int().min(1).max(64).default(4),
    requests_per_second: z.number().positive().max(10_000).default(20),
    retries: z.int().min(0).max(20).default(5),
    timeout_ms: z.int().min(100).max(600_000).default(30_000),
    /** The largest answer read (bytes of its body): one runaway answer fails its window instead of the memory. */
    max_response_bytes: z
      .int()
      .min(1024)
      .max(1024 ** 3)
      .default(DEFAULT_MAX_RESPONSE_BYTES),
    backoff_base_ms: z.int().min(1).max(600_000).default(250),
    backoff_max_ms: z.int().min(1).max(600_000).default(30_000),
    /**
     * Spans of windows (or counts of windows) in a row that get no answer at all (refused, reset or timed-out
     * connections, retries spent) after which a run stops asking the source; 0 never stops early.
     */
    stop_after_no_answer: z.int().min(0).max(10_000).default(DEFAULT_STOP_AFTER_NO_ANSWER),
  })
  .strict()
  .refine((s) => s.backoff_base_ms <= s.backoff_max_ms, {
    message: 'must not be less than backoff_base_ms',
    path: ['backoff_max_ms'],
  });

/** A DuckDB size setting. */
const duckdbSize = z.string().regex(DUCKDB_SIZE, 'must be a size such as 128MB or 1GiB');

/**
 * What analysts read of the customers' personal data (phone, e-mail, names, birthdate): the published DuckDB copy,
 * or the PostgreSQL schema of views analysts are granted. `hash` (the default) needs `LOYALTY_PII_SALT`.
 */
const analystsSchema = z
  .object({
    personal_data: z.enum(['keep', 'hash', 'drop']).default('hash'),
    /** PostgreSQL: the schema of views for analysts (default: the warehouse's schema + `_analysts`). */
    schema: z.string().min(1).optional(),
    /** What a commit does when values no longer fit a published column's type (docs/warehouse.md, "The schema contract"). */
    schema_contract: z.enum(['evolve', 'discard_value', 'freeze']).optional(),
    /** Whether the copy (DuckDB), the analysts' schema (PostgreSQL) and the catalog hold the pipeline's `_etl_` tables too. */
    pipeline_tables: z.boolean().optional(),
  })
  .strict();

/**
 * The raw archive of the service's answers (docs/archive.md): `false` keeps none; otherwise where (default: beside
 * a DuckDB warehouse, `<name>.archive/`; for PostgreSQL, `./<database>.archive/`) and how long and how much it keeps.
 */
const archiveSchema = z.union([
  z.literal(false),
  z
    .object({
      path: z.string().min(1).optional(),
      keep_days: z.int().min(1).max(36_600).optional(),
      max_bytes: z.int().min(1).optional(),
    })
    .strict(),
]);

const destinationSchema = z.discriminatedUnion('type', [
  z
    .object({
      type: z.literal('duckdb'),
      path: z.string().min(1).default('./warehouse.duckdb'),
      schema: z.string().min(1).default('main'),
      /** What DuckDB's buffer manager may hold before it spills to `<path>.tmp/` (default 256MB). */
      memory_limit: duckdbSize.optional(),
      /**
       * How much write-ahead log DuckDB gathers before it checkpoints (writes committed rows into the file);
       * DuckDB's default, 16MB, unless set.
       */
      checkpoint_threshold: duckdbSize.optional(),
      /** DuckDB's worker threads (default: the machine's cores but one, at least one). */
      threads: z.int().min(1).max(1024).optional(),
      /** What the staged rows of the spans a run loads at once may take (default 8MB; the oldest span still reading always reads on). */
      staging_memory: duckdbSize.optional(),
      /**
       * Where the read-only copy for analysts is published after each run and backfill (default: beside the
       * warehouse, `<name>.published.duckdb`); `false` publishes none. See `load/duckdb/publish.ts`.
       */
      publish_path: z.union([z.string().min(1), z.literal(false)]).optional(),
      /** The directory the webhook receiver spools events into (default: beside the warehouse, `<name>.events`). */
      event_spool: z.string().min(1).optional(),
      /** Seconds `run`, `backfill` and `publish` wait for a warehouse file another process holds (default 300). */
      busy_timeout_s: z.int().min(0).max(86_400).optional(),
      analysts: analystsSchema.optional(),
      archive: archiveSchema.optional(),
    })
    .strict(),
  z
    .object({
      type: z.literal('postgres'),
      url: z.string().regex(/^postgres(ql)?:\/\//, 'must be a postgres:// URL'),
      schema: z.string().min(1).default('public'),
      analysts: analystsSchema.optional(),
      /** Seconds a statement of the pipeline waits for a lock another session holds (PostgreSQL's lock_timeout; default 300). */
      busy_timeout_s: z.int().min(0).max(86_400).optional(),
      archive: archiveSchema.optional(),
    })
    .strict(),
]);

const jobSchema = z
  .object({
    streams: z
      .array(z.enum(STREAM_NAMES))
      .min(1)
      .default([...STREAM_NAMES]),
    window_days: z.int().min(1).max(366).default(1),
    lookback_days: z.int().min(0).max(366).default(2),
    first_day: isoDay,
    reject_threshold: z.number().min(0).max(1).default(0.05),
    /**
     * The state streams ask the customers with a sign of change in the night's windows, plus a rolling sweep
     * that asks every customer at least once in this many nights (docs/customers.md).
     */
    sweep_days: z.int().min(1).max(366).default(DEFAULT_SWEEP_DAYS),
    postings: z
      .object({
        customers: z.enum(POSTINGS_SELECTIONS).default('all'),
        max_span_days: z.int().min(1).max(3660).default(31),
        /** With `changed` or `webhook`: every customer's postings are read at least once in this many nights. */
        sweep_days: z.int().min(1).max(366).optional(),
      })
      .strict()
      .default({ customers: 'all', max_span_days: 31 }),
    /**
     * Streams whose versions are kept (`accounts_history`, `loyalty_status_history` and its wallets' and expiries',
     * `vouchers_history`): each is on unless set to false here (a stream not named,
     * or no `history` key, keeps its history). Off, a span records no observations and rebuilds no versions; changes
     * served meanwhile are missing from the history for good.
     */
    first_night: z.enum(FIRST_NIGHTS).optional(),
    history: z
      .object({
        accounts: z.boolean().optional(),
        loyalty_status: z.boolean().optional(),
        vouchers: z.boolean().optional(),
      })
      .strict()
      .optional(),
  })
  .strict()
  .refine((j) => !j.streams.some((s) => PER_CUSTOMER_STREAMS.includes(s)) || j.streams.includes('accounts'), {
    message:
      'loyalty_postings, loyalty_status and vouchers ask the customers of the accounts stream: list accounts too',
    path: ['streams'],
  })
  .refine((j) => j.postings.sweep_days === undefined || j.postings.customers !== 'all', {
    message: 'sweep_days is for the selections changed and webhook: customers all asks every customer every night',
    path: ['postings', 'sweep_days'],
  })
  .refine(
    (j) => j.first_night !== 'sweep' || !j.streams.includes('loyalty_postings') || j.postings.sweep_days !== undefined,
    {
      message:
        'first_night: sweep leaves customers to the postings sweep: set postings.sweep_days (with customers changed or webhook)',
      path: ['first_night'],
    },
  );

/** What a user writes in `jobs.yaml`, after `${VAR}` substitution. */
export const configFileSchema = z
  .object({
    source: sourceSchema,
    destination: destinationSchema.default({ type: 'duckdb', path: './warehouse.duckdb', schema: 'main' }),
    /** Where `run`, `backfill` and `replay` write their Prometheus metrics when they end (`--metrics-file`). */
    metrics: z
      .object({ file: z.string().min(1).optional() })
      .strict()
      .optional(),
    jobs: z
      .record(z.string().regex(/^[A-Za-z0-9_.-]+$/, 'job names use letters, digits, _ . -'), jobSchema)
      .refine((j) => Object.keys(j).length > 0, 'at least one job is needed'),
  })
  .strict();

export type ConfigFile = z.infer<typeof configFileSchema>;

/** True when A and B are the same type. */
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;

/**
 * The schema's output is the plan's settings types exactly: a key added to one and not the other fails the
 * typecheck here, not a run.
 */
export const settingsMatchTheSchema: [
  Same<ConfigFile['jobs'][string], JobSettings>,
  Same<ConfigFile['source'], SourceSettings>,
  Same<ConfigFile['destination'], DestinationSettings>,
] = [true, true, true];
