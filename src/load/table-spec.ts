/** Column types both warehouses share; each destination maps them to its own type names. */
export type ColumnType = 'text' | 'date' | 'timestamptz' | 'decimal' | 'double' | 'integer' | 'boolean' | 'json';

export interface ColumnSpec {
  name: string;
  type: ColumnType;
}

/**
 * How a staged table reaches its target inside the window's transaction.
 * - `latest-wins`: upsert on the key, but never over a row loaded from a later window (`_window_start`). Of a key staged
 *   more than once in a window, the last occurrence wins, or with `order`, the row with the greatest value of that
 *   column (accounts: `profile_set_at`, so an export listing a customer once per change keeps the last change
 *   whatever order its pages came in).
 * - `upsert`: plain upsert on the key.
 * - `replace-window`: the span's windows hold exactly what was staged: rows loaded earlier from the same
 *   windows are deleted first (a listing filtered by window is the whole truth of that window).
 * - `children`: rows owned by a `latest-wins` parent, staged as its entries; for every parent row the window wins, the old
 *   children are deleted and the staged ones inserted (so a removed custom field disappears).
 * - `replace-all`: the table holds exactly what was staged (reference data listed whole, such as profiles).
 * - `customer-state`: a customer's state as the service reports it today. For every customer the span asked (the
 *   staged rows of `askedIn` whose `outcome` is not `unaskable`), the table's rows of that `customer_id` are
 *   replaced by the staged ones: a wallet or an expiry no longer reported is removed.
 * - `customer-listing`: a list per customer whose items are kept when they leave it. Staged rows are upserted,
 *   keeping the `firstSeen` column of the row they replace; rows of a customer asked (as above) that the span did
 *   not stage get `gone` set to the instant of that customer's observation, once.
 */
export type MergeRule =
  | { kind: 'latest-wins'; order?: string }
  | { kind: 'upsert' }
  | { kind: 'replace-window' }
  | { kind: 'replace-all' }
  | { kind: 'children'; parent: string; parentKey: string[] }
  | { kind: 'customer-state'; askedIn: string }
  | { kind: 'customer-listing'; askedIn: string; firstSeen: string; lastSeen: string; gone: string };

/**
 * One column per distinct name of the JSON objects `{name: text | null}` that the table's staging-only column
 * `column` holds, named `prefix + sanitized name`, text-typed: each row finds its pivot values in its own staged row.
 * `child` is the long table of the same values.
 */
export interface PivotSpec {
  prefix: string;
  column: string;
  child: string;
}

/**
 * A table whose rows are staged inside the staged rows of another table of the stream (`table`), instead of in
 * a staging table of their own: values a record would otherwise stage twice (a key on every child row, a second
 * table of the same keys) are staged once, and the loader stages one row per record.
 * - `copy`: one row per staged row of `table`, of the columns this table declares (all of them `table`'s too).
 * - `entries`: one row per entry of the JSON object `{name: text | null}` held in `table`'s staging-only column
 *   `column`; `nameColumn` takes the entry's name, `valueColumn` its value, every other column `table`'s.
 * - `rows`: one row per element of the JSON array held in `table`'s staging-only column `column`; an element is an
 *   array of the values of this table's columns that `table` does not have, in their order (a row of several rows per
 *   record, such as a custom field's options); every other column is `table`'s.
 */
export type StagedWith =
  | { table: string; kind: 'copy' }
  | { table: string; kind: 'entries'; column: string; nameColumn: string; valueColumn: string }
  | { table: string; kind: 'rows'; column: string };

/**
 * What the loader keeps current from a table's rows, in the same transaction, after each merge of it:
 * - `surveys`: the `surveys` table and a wide view per survey (`load/derived/survey-catalog.ts`);
 * - `typed-fields`: typed `cf_` columns where `profile_fields` gives a type (`load/derived/typed-fields.ts`).
 */
export type DerivedObjects = 'surveys' | 'typed-fields';

/**
 * Versions of a table's rows kept beside it (`<table>_history`), rebuilt from observations so that they never depend
 * on the order spans are loaded in. Each commit records what the span observed — one row per key and observation
 * time, with a hash of its content — in `observations`, then rebuilds the versions of every key the span touched
 * from all of that key's observations: a version starts at an observation whose content differs from the one
 * before it and ends where the next version starts (`valid_from` inclusive, `valid_to` exclusive, NULL while
 * current). Loading the same observations in any order, in parallel or again gives the same versions.
 *
 * Both tables are created by a migration (`sql/<dialect>/`): see docs/warehouse.md, "History", for their columns.
 *
 * @example
 * // a table whose rows carry the instant they were read, each row versioned by its own key
 * history: { table: 'tier_state_history', observations: '_etl_tier_state_observations', observedAt: 'observed_at' }
 * // the per-customer state declares a scope as well (streams/loyalty-status.ts, streams/vouchers.ts)
 */
export interface HistorySpec {
  /** The versions table: the tracked table's data columns, `objects`, `valid_from`, `valid_to`, `is_current`, `content_hash`. */
  table: string;
  /** The observations table: the data columns, `objects`, `_window_start`, `content_hash`, keyed by the key and `observedAt`. */
  observations: string;
  /**
   * When a row was observed, and so the type of `valid_from`/`valid_to`:
   * - `_window_start`: the window that served it (a DATE). The window's listing is the whole truth of the window, so
   *   a re-load of it replaces every observation of the window (an export filtered by change day, such as accounts).
   * - a data column (a TIMESTAMPTZ such as `observed_at`): each load is an observation of its own; a re-load adds
   *   one unless the same instant was observed already. The column is not part of the content.
   */
  observedAt: string;
  /**
   * Staging-only JSON object columns (`{name: text | null}`) that are part of the content, kept in the history
   * under a name of their own (accounts: its custom fields, `_custom_fields` → `custom_fields`).
   */
  objects?: ReadonlyArray<{ staged: string; column: string }>;
  /** Data columns the loader derives (vouchers' `first_seen_at`, `gone_at`): neither content nor kept in the history. */
  exclude?: readonly string[];
  /**
   * With `observedAt: '_window_start'`: a staging-only DATE column, also kept in the observations, holding the day the
   * source says the row's content was set (accounts: `profileSet`, in the job's zone). No version starts before it:
   * an observation counts from the later of its window and that day, so an export that serves a customer's current
   * profile for a past window never backdates it. Of observations counting from the same day, the last loaded wins.
   */
  notBefore?: string;
  /** One observation covers every key of its scope (see {@link HistoryScope}); without it, a key is versioned alone. */
  scope?: HistoryScope;
}

/**
 * A history whose observations are per scope (a customer): one observation of a scope at an instant holds ALL of the
 * scope's keys, so a key the observation lacks ended at that instant, and opens a new version if it comes back. The
 * versions of every scope a span observed are rebuilt from all of the scope's observations, where each observation
 * is the set of keys present then — an observation of no rows included (a customer answered `1005`, or with an
 * empty list), which ends every version of the scope.
 */
export interface HistoryScope {
  /** The key columns naming the scope (`customer_id`). */
  columns: string[];
  /**
   * A staged table of the same stream listing the scopes the span observed: the scope columns, the history's
   * `observedAt` and `outcome`. A row whose `outcome` is `unaskable` observed nothing. A row's observation time is
   * its scope's here, so a table whose rows carry no instant can declare one.
   */
  observedIn: string;
  /** Every observation of a scope ever loaded (the scope columns, `observedAt`, `_run_id`, `_loaded_at`); the histories of one stream share it. */
  observations: string;
}

/** A warehouse table a stream writes: its key, its data columns and how its rows merge. */
export interface TableSpec {
  name: string;
  key: string[];
  /** Data columns, key included; the system columns `_window_start`, `_run_id`, `_loaded_at` are added by the loader. */
  columns: ColumnSpec[];
  merge: MergeRule;
  pivot?: PivotSpec;
  /** Staged inside another table's staged rows (no staging table of its own). */
  stagedWith?: StagedWith;
  /** Columns staged with the rows but never written to the target: what tables staged with this one read. */
  stagingOnly?: ColumnSpec[];
  /** The target has no `_window_start`: reference data, not loaded by window. */
  windowless?: boolean;
  /** What the loader rebuilds from this table after merging it. */
  derived?: DerivedObjects;
  /** Versions of the rows are kept as well (see {@link HistorySpec}); a job may turn it off (`jobs.<name>.history`). */
  history?: HistorySpec;
  /**
   * The kind of source record whose members the spec does not list are kept in this table's {@link UNLISTED_COLUMN}
   * (`account`, `posting`, …): the pipeline names each one once in `_etl_unlisted_fields`. The column is declared
   * with the others; no history compares it.
   */
  recordType?: string;
}

/** The JSON column of a record's unlisted members: an object of their paths (`tier.colour`), NULL when there are none. */
export const UNLISTED_COLUMN: ColumnSpec = { name: '_unlisted', type: 'json' };

/** A row as the transform hands it to the loader: column name → value already in its final text form. */
export type Row = Record<string, string | number | null>;

/** Columns every target table carries besides its data columns. */
export const SYSTEM_COLUMNS: ColumnSpec[] = [
  { name: '_window_start', type: 'date' },
  { name: '_run_id', type: 'text' },
  { name: '_loaded_at', type: 'timestamptz' },
];
