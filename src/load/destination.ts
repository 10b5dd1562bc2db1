import type { AnalystsPolicy, SchemaContract } from '../plan/job-plan.js';
import type { Day } from '../plan/days.js';
import type { Window } from '../plan/windows.js';
import type { SqlConnection } from './warehouse/sql-connection.js';
import type { DescribedRelation } from './catalog/table-comments.js';
import type { Row, TableSpec } from './table-spec.js';

/** What a destination can do; the pipeline reads these instead of asking which database it is. */
export interface DestinationCapabilities {
  /** Several processes may load into it at once (PostgreSQL); a DuckDB file belongs to one process. */
  readonly multiProcess: boolean;
  /** Window claims can use row locks (`FOR UPDATE SKIP LOCKED`). */
  readonly rowLocks: boolean;
  /**
   * The data tables declare their keys, so the database itself refuses a second row with the same key
   * (PostgreSQL). Without (DuckDB, `sql/duckdb/005_unkeyed_data_tables.sql`) the merge alone keeps them, and
   * `verify` checks them.
   */
  readonly declaredKeys: boolean;
  /**
   * A damaged block is found only when it is read, and a read checks it (DuckDB's block checksums): `status` reads
   * such a warehouse whole ({@link Destination.readWhole}) so that it is never green over one. PostgreSQL's data
   * checksums are off unless the cluster was made with them, and its server reports what it meets.
   */
  readonly checksumsOnRead: boolean;
}

/** Describes the span about to be loaded: its rows and rejects are stamped with the job, stream and run. */
export interface SpanLoadRequest {
  job: string;
  stream: string;
  runId: string;
  windows: Window[];
  tables: TableSpec[];
  /** What the commit does when values no longer fit a published column's type; absent: `evolve`. */
  schemaContract?: SchemaContract | undefined;
}

/** What a span's merge put in the warehouse, per window start. */
export interface MergedSpan {
  /** ISO UTC, the `_loaded_at` of the span's rows. */
  loadedAt: string;
  /** Distinct keys of the stream's main table each window loaded. */
  loaded: Map<Day, number>;
  /** Records each window rejected. */
  rejected: Map<Day, number>;
  /** Fields each window loaded as NULL because their value could not be read. */
  fieldsRejected: Map<Day, number>;
}

/**
 * The work of a span's transaction, which the pipeline owns: `merge` moves the staged rows of the windows
 * committed into the warehouse (once), and the rest of the work — claim, ledger, watermark — goes around it on
 * the same connection. Whatever it throws rolls all of it back.
 */
export type SpanTransaction<T> = (conn: SqlConnection, merge: () => Promise<MergedSpan>) => Promise<T>;

/** A field of a loaded record whose value could not be read: the record loads with the field NULL. */
export interface FieldReject {
  windowStart: Day;
  recordKey: string;
  field: string;
  /** The value as served, as JSON. */
  rawValue: string | null;
  error: string;
}

/**
 * The staging of one span (one or more windows of one stream). Rows are appended in bounded batches as pages
 * arrive; `commit` merges them and records the windows in one transaction; `abort` drops everything staged.
 */
export interface SpanLoad {
  /** Appends rows of `table` for the window starting `windowStart`; `seq` is the source record's occurrence number. */
  append(table: string, rows: ReadonlyArray<{ seq: number; windowStart: Day; row: Row }>): Promise<void>;
  /** Stages rejected records. */
  reject(rows: ReadonlyArray<{ windowStart: Day; payload: string; error: string }>): Promise<void>;
  /** Stages fields loaded as NULL (their records are loaded): the record's key, the field, its raw value and why. */
  rejectFields(rows: ReadonlyArray<FieldReject>): Promise<void>;
  /**
   * Drops what was staged so far for the window starting `windowStart`, or for the whole span when no window is
   * named (the source changed while the window was read, and it is read again).
   */
  reset(windowStart?: Day): Promise<void>;
  /**
   * Runs `work` in one transaction, in which it merges the staged rows of `windows` (the span's, or its first
   * ones when the others could not be read: their staged rows must have been dropped with `reset`).
   *
   * @example
   * const counts = await load.commit(span, async (conn, merge) => {
   *   await assertClaimed(conn, …);
   *   const merged = await merge();
   *   await recordWindowsDone(conn, …);
   *   return merged;
   * });
   */
  commit<T>(windows: Window[], work: SpanTransaction<T>): Promise<T>;
  /**
   * Writes the staged rejects of `windows` to `_etl_rejects` in a transaction of its own, in place of those an
   * earlier load of the windows left, and nothing else: the windows failed on their rejects, which an operator must
   * be able to read. Their other staged rows are not loaded.
   */
  keepRejects(windows: Day[]): Promise<void>;
  /** Releases the staging without loading anything. */
  abort(): Promise<void>;
}

/** What a publish left for readers (`Destination.publishCopy`). */
export interface PublishedCopy {
  /** The published file, absolute. */
  path: string;
  bytes: number;
  /** From the checkpoint to the rename. */
  seconds: number;
  /** Of those, the pipeline's own writes waited this long (the checkpoint and the copy). */
  heldSeconds: number;
  /** How the copy was written where it withholds personal data (`hash`, `drop`); absent under `keep`. */
  rewrite?: AnalystCopyRewrite;
}

/** How a copy that withholds personal data was written. */
export interface AnalystCopyRewrite {
  /** `incremental`: the previous copy, with only the tables that changed written again; `whole`: every table. */
  how: 'incremental' | 'whole';
  /** Why the copy was written whole: there was no previous copy, or it could not be started from. */
  why?: string;
  /** Tables of the copy. */
  tables: number;
  /** Tables whose rows were written, whole or the windows of them that changed (`schema.table`). */
  written: string[];
  /** Rows written. */
  rowsWritten: number;
  /** Tables of the previous copy gone from the warehouse, dropped. */
  dropped: string[];
  /** Seconds spent reading every table of the snapshot for its fingerprint. */
  fingerprintSeconds: number;
}

/**
 * A warehouse: DuckDB or PostgreSQL. One interface, one implementation per database under `load/<name>/`.
 */
export interface Destination {
  readonly name: 'duckdb' | 'postgres';
  readonly schema: string;
  readonly capabilities: DestinationCapabilities;
  /**
   * What the staged rows of the spans a run loads at once may take in this process (estimated bytes, see
   * `pipeline/staging-budget.ts`): DuckDB keeps them in its pool; PostgreSQL keeps them in the server (none).
   */
  readonly stagingBytes?: number;
  /** Creates or upgrades the warehouse tables (`sql/<name>/*.sql`), recording what it applied. */
  migrate(): Promise<void>;
  /** Opens the staging of one span. */
  openSpan(request: SpanLoadRequest): Promise<SpanLoad>;
  /**
   * Reads every table of the warehouse whole, each value of each row, so that a damaged block anywhere is met: a
   * count alone reads none. Throws what the read hit.
   */
  readWhole(): Promise<void>;
  /** Runs `fn` with a connection of its own (ledger reads and writes, status, verify). */
  withConnection<T>(fn: (conn: SqlConnection) => Promise<T>): Promise<T>;
  /**
   * Runs `fn` in one short transaction on a connection of its own, for writes to the pipeline's own tables
   * (claims, leases, locks). On DuckDB it takes turns with span commits: one writer at a time in the process.
   *
   * @example
   * const claimed = await destination.ledgerTransaction((conn) => claimWindows(conn, destination.capabilities, scope, span));
   */
  ledgerTransaction<T>(fn: (conn: SqlConnection) => Promise<T>): Promise<T>;
  /**
   * Publishes a consistent read-only copy of the warehouse at `target` for analysts, replacing the previous copy
   * atomically (DuckDB, whose file belongs to one process), holding what `analysts` lets them read of personal data.
   * PostgreSQL serves readers itself and has none.
   */
  publishCopy?(target: string, analysts: AnalystsPolicy): Promise<PublishedCopy>;
  /**
   * Records what analysts may read of personal data and keeps the schema of views they are granted in step
   * (PostgreSQL: `analysts.schema`). DuckDB's analysts read the published copy instead ({@link publishCopy}).
   */
  keepAnalysts?(analysts: AnalystsPolicy, runId: string): Promise<void>;
  /** Every table and view of the warehouse's schema with its columns, types, key and descriptions (`catalog`). */
  describeTables(): Promise<DescribedRelation[]>;
  /** A short description for logs and `check`, without credentials. */
  describe(): string;
  close(): Promise<void>;
}
