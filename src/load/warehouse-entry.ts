import type { AnalystsPolicy } from '../plan/job-plan.js';
import type { Destination } from './destination.js';
import type { ExportSource } from './export/parquet-export.js';
import type { WaitOptions } from './open-when-free.js';
import type { WarehouseReader } from './warehouse/warehouse-reader.js';

/**
 * One dialect's entry in the registry of warehouses (`load/warehouses.ts`): the same shape for DuckDB
 * (`load/duckdb/duckdb-warehouse.ts`) and PostgreSQL (`load/postgres/postgres-warehouse.ts`), made from the
 * `destination` settings. The commands ask it what they need and never which database it is.
 *
 * @example
 * const warehouse = warehouseOf(config.destination);
 * const destination = await warehouse.openWhenFree({ timeoutSeconds: 300, logger });
 */
export interface WarehouseEntry {
  /** The dialect, as `destination.type` names it. */
  readonly name: 'duckdb' | 'postgres';
  /**
   * Readers read a copy the pipeline publishes (DuckDB: a file belongs to one writing process); without, the
   * warehouse serves its readers itself (PostgreSQL).
   */
  readonly publishesCopy: boolean;
  /**
   * The file opening would create, when it does not exist yet (DuckDB); undefined when the warehouse is there, or
   * is a server's database, which opening never creates.
   */
  missingFile(): string | undefined;
  /**
   * Opens the warehouse for loading and brings its tables up to date. With `create: false` (the commands that only
   * look at a warehouse: `check`, `status`, `verify`, `report`) it must exist already.
   *
   * @throws WarehouseConfigError for a warehouse that cannot be used as configured, or is missing under `create: false`.
   * @throws WarehouseBusyError while another process holds a DuckDB file.
   */
  open(options?: { create?: boolean }): Promise<Destination>;
  /**
   * Opens it like {@link open}, but while another process holds a DuckDB file it tries again until
   * `timeoutSeconds` have passed, saying what it waits for.
   */
  openWhenFree(wait: WaitOptions): Promise<Destination>;
  /**
   * A read-only session for `sql`. `say` hears, each as a whole line, what the person should know first: which file
   * is read when no copy is published, or what the session's role may do that an analyst's should not.
   */
  openReader(options: ReaderOptions): Promise<WarehouseReader>;
  /**
   * The warehouse as a Parquet export reads it: a DuckDB file opened read-only (never migrated, no writer's lock),
   * or the PostgreSQL destination opened as every command opens it, waiting while it is busy.
   */
  openExportSource(wait: WaitOptions): Promise<ClosableExportSource>;
  /** What `check` says of the opened warehouse beyond that it answers: warnings, each a whole line (may be none). */
  checks(destination: Destination): Promise<string[]>;
  /** The schema analysts read, and those words for a reader (`catalog`). */
  analystsRead(policy: AnalystsPolicy): { schema: string; words: string };
}

/** Options of {@link WarehouseEntry.openReader}. */
export interface ReaderOptions {
  /** Hears the lines to say before the session starts. */
  say(line: string): void;
  /**
   * Where the copy for readers is published (DuckDB): it is read when it exists, else the warehouse file itself,
   * after saying so; `false`: publishing is off, and the file is read after saying so. Absent: the warehouse as
   * named, nothing said (`sql --warehouse`).
   */
  publishedCopy?: string | false;
  /**
   * Read the pipeline's own tables instead of what analysts read: the DuckDB warehouse file, or the PostgreSQL
   * warehouse's schema; `say` first hears that they hold personal data in clear.
   */
  pipeline?: boolean;
  /** PostgreSQL: the analysts' schema of views, read unless `pipeline` (absent: the warehouse's own schema). */
  analystsSchema?: string;
}

/** What `sql --pipeline` says before it reads the pipeline's own tables (`where`: its file or schema). */
export function pipelineNote(where: string, held: boolean): string {
  return `note: reading the pipeline's own ${where}: its tables hold personal data in clear, whatever destination.analysts.personal_data gives analysts${held ? '; while this session is open, runs wait for it' : ''}`;
}

/** An export source and what closes it. */
export interface ClosableExportSource extends ExportSource {
  close(): Promise<void>;
}
