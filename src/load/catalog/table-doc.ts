/**
 * What every table and view of the warehouse holds, in words: the source of the comments written on them in both
 * warehouses (`table-comments.ts`) and of `loyalty-etl catalog` (dbt sources, a data dictionary, JSON). Columns
 * made at run time (a custom field's `cf_` column, a survey view's `q_` columns, typed columns) are described from
 * `_etl_columns` and `_etl_typed_columns` instead; a history or observations table borrows the descriptions of the
 * table it keeps versions of.
 */
export interface TableDoc {
  name: string;
  /** What one row is, and where it comes from. */
  description: string;
  /** The columns that identify a row (empty: none). */
  key: readonly string[];
  /** Whether analysts read it (data) or the pipeline keeps it for itself (`_etl_` tables). */
  audience: 'analysts' | 'pipeline';
  /** Column name → description; `COMMON_COLUMNS` and the borrowed table fill in the rest. */
  columns: ReadonlyMap<string, string>;
  /** The table whose column descriptions this one borrows (a history or observations table). */
  borrows?: string;
}

/** Columns many tables carry, described once. */
export const COMMON_COLUMNS: ReadonlyMap<string, string> = new Map([
  ['_window_start', 'The first day of the load window the row was loaded from (days in source.timezone).'],
  ['_run_id', 'The run (or backfill, or receiver) that wrote the row; see _etl_runs.'],
  ['_loaded_at', 'When the row was written to the warehouse (UTC): the freshness column.'],
  [
    'valid_from',
    'When this version started (inclusive): the day of the window, or the instant of the observation, that first served it.',
  ],
  ['valid_to', 'When this version ended (exclusive): the valid_from of the next version; NULL while current.'],
  ['is_current', 'Whether this is the current version (valid_to IS NULL).'],
  ['content_hash', "MD5 of the row's content: consecutive observations with the same hash are one version."],
  ['observed_at', 'When the service was asked for this customer (UTC).'],
  ['customer_id', "The customer's id in the service (customerId)."],
  ['run_id', 'The run that wrote the row; see _etl_runs.'],
  ['job', 'The job of jobs.yaml.'],
  ['stream', 'The stream: accounts, surveys, loyalty_postings, loyalty_status or vouchers.'],
  ['updated_at', 'When the row was last written (UTC).'],
  [
    '_unlisted',
    "The record's members the service sent that the spec does not list, as JSON keyed by their path in the record (NULL when none); see _etl_unlisted_fields. May hold personal data: left out of what analysts read under hash and drop.",
  ],
]);

/** A table's description, its columns given as pairs of name and description. */
export function table(
  name: string,
  key: string[],
  audience: TableDoc['audience'],
  description: string,
  columns: Array<[string, string]>,
  borrows?: string,
): TableDoc {
  return { name, key, audience, description, columns: new Map(columns), ...(borrows ? { borrows } : {}) };
}
