import { readEveryTable } from '../warehouse/warehouse-damage.js';
import { existsSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { resolve } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { duckdbSizeBytes } from '../../plan/duckdb-size.js';
import type { AnalystsPolicy } from '../../plan/job-plan.js';
import { migrate } from '../warehouse/migrate.js';
import { dropSharedQuestionColumns } from '../derived/survey-catalog.js';
import { commentWarehouse, describeRelations, type DescribedRelation } from '../catalog/table-comments.js';
import { duckdbDialect } from '../warehouse/warehouse-dialect.js';
import { OpenSpans } from '../released-span-load.js';
import { Mutex } from '../warehouse/mutex.js';
import { quoteIdent } from '../warehouse/identifiers.js';
import type { Destination, PublishedCopy, SpanLoad, SpanLoadRequest } from '../destination.js';
import type { SqlConnection } from '../warehouse/sql-connection.js';
import { DuckDbSqlConnection } from './duckdb-connection.js';
import { DuckDbSpanLoad } from './duckdb-span-load.js';
import { DeferredVacuum } from './deferred-vacuum.js';
import { PoolTrim } from './pool-trim.js';
import { WarehouseBusyError, WarehouseConfigError } from '../warehouse/warehouse-errors.js';
import { publishWarehouse } from './publish.js';
import { makeWarehouseDirectory } from '../warehouse/warehouse-directory.js';

/**
 * What DuckDB's buffer manager may hold by default (`destination.memory_limit`): data pages, staging tables,
 * sorts and joins, which spill to `<warehouse>.tmp/` beyond it. DuckDB's own default (most of the machine's
 * memory) would let one load take gigabytes; this one leaves room for a million customers' commits
 * (docs/performance.md, "Memory"), and the pool gives back its cached pages after each commit ({@link PoolTrim}).
 */
export const DEFAULT_MEMORY_LIMIT = '256MB';

/**
 * What the rows of the spans a run loads at once may take staged, by default (`destination.staging_memory`; see
 * `pipeline/staging-budget.ts`). DuckDB holds staged rows, and a transaction's inserted rows until its commit, in
 * its pool, so lanes staging large spans side by side raise the peak; this lets a month of surveys stage alone
 * while the next one reads (docs/performance.md, "destination.staging_memory").
 */
export const DEFAULT_STAGING_MEMORY = '8MB';

/**
 * DuckDB's worker threads by default (`destination.threads`): the machine's cores but one, which the pipeline's own
 * thread keeps busy parsing and checking records, handing them to the appenders; DuckDB's own default is every core,
 * whose threads would then compete with the pipeline's for CPU without loading any faster.
 */
export function defaultDuckDbThreads(): number {
  return Math.max(1, availableParallelism() - 1);
}

/** The jobs file's DuckDB settings (`destination.memory_limit`, `destination.checkpoint_threshold`, `destination.threads`). */
export interface DuckDbSettings {
  memoryLimit?: string;
  /**
   * Write-ahead log gathered before a checkpoint. DuckDB's default of 16MB checkpoints after every commit of a long
   * backfill; a larger one checkpoints less often, but holds more memory and leaves more log to replay after a
   * crash, and since deleted rows are compacted in batches ({@link DeferredVacuum}) it no longer loads any faster.
   */
  checkpointThreshold?: string;
  /** DuckDB's worker threads; {@link defaultDuckDbThreads} unless set. */
  threads?: number;
  /** What the staged rows of a run's spans in flight may take; {@link DEFAULT_STAGING_MEMORY} unless set. */
  stagingMemory?: string;
}

/** DuckDB: a single file, one process, parallel windows whose commits take turns. */
export class DuckDbDestination implements Destination {
  readonly name = 'duckdb';
  readonly capabilities = { multiProcess: false, rowLocks: false, declaredKeys: false, checksumsOnRead: true };
  private readonly commitLock = new Mutex();
  private readonly spans = new OpenSpans();
  readonly stagingBytes: number;

  private constructor(
    private readonly instance: DuckDBInstance,
    readonly path: string,
    readonly schema: string,
    private readonly vacuum: DeferredVacuum,
    private readonly pool: PoolTrim,
    stagingMemory: string,
  ) {
    this.stagingBytes = duckdbSizeBytes(stagingMemory);
  }

  /**
   * Opens the warehouse file; with `create` (the default) a missing one is created, directories included.
   *
   * @throws WarehouseConfigError when the file is no DuckDB database, its directory cannot be made, or it is missing and `create` is false.
   */
  static async open(
    path: string,
    schema = 'main',
    settings: DuckDbSettings = {},
    { create = true }: { create?: boolean } = {},
  ): Promise<DuckDbDestination> {
    const file = path === ':memory:' ? path : resolve(path);
    if (file !== ':memory:' && !existsSync(file)) {
      if (!create)
        throw new WarehouseConfigError(
          `warehouse ${file} does not exist; run \`loyalty-etl run\` to create it (or correct destination.path / LOYALTY_WAREHOUSE)`,
        );
      makeWarehouseDirectory(file);
    }
    try {
      // No statement of the pipeline relies on the order rows are inserted in; not keeping it lets DuckDB hold less.
      const memoryLimit = settings.memoryLimit ?? DEFAULT_MEMORY_LIMIT;
      const instance = await DuckDBInstance.create(file, {
        memory_limit: memoryLimit,
        preserve_insertion_order: 'false',
        threads: String(settings.threads ?? defaultDuckDbThreads()),
        ...(settings.checkpointThreshold ? { checkpoint_threshold: settings.checkpointThreshold } : {}),
      });
      const raw = await instance.connect();
      try {
        return new DuckDbDestination(
          instance,
          file,
          schema,
          await DeferredVacuum.install(new DuckDbSqlConnection(raw, schema)),
          new PoolTrim(memoryLimit),
          settings.stagingMemory ?? DEFAULT_STAGING_MEMORY,
        );
      } finally {
        raw.closeSync();
      }
    } catch (error) {
      const message = (error as Error).message;
      if (/lock/i.test(message)) {
        const pid = /PID (\d+)/.exec(message)?.[1];
        throw new WarehouseBusyError(
          `warehouse ${file} is in use by another process${pid ? ` (PID ${pid})` : ''}; DuckDB allows one process per file`,
          pid ? Number(pid) : undefined,
        );
      }
      // the file is there but DuckDB cannot open it as a database (another kind of file, a directory, no permission)
      if (/^(IO|Serialization|Permission) Error/i.test(message))
        throw new WarehouseConfigError(`warehouse ${file} cannot be opened as a DuckDB database: ${message}`);
      throw error;
    }
  }

  describeTables(): Promise<DescribedRelation[]> {
    return this.withConnection((conn) => describeRelations(conn, duckdbDialect, this.schema));
  }

  describe(): string {
    return `duckdb ${this.path} (schema ${this.schema})`;
  }

  async migrate(): Promise<void> {
    await this.withConnection(async (conn) => {
      await conn.run(`CREATE SCHEMA IF NOT EXISTS ${quoteIdent(this.schema)}`);
      await conn.run(`SET schema = '${this.schema.replaceAll("'", "''")}'`);
      await migrate(conn, 'duckdb', this.schema, new Date().toISOString(), this.describe());
      await dropSharedQuestionColumns(conn, duckdbDialect, this.schema, {
        runId: 'migration',
        now: new Date().toISOString(),
      });
      await commentWarehouse(conn, duckdbDialect, this.schema);
    });
  }

  async openSpan(request: SpanLoadRequest): Promise<SpanLoad> {
    const raw = await this.instance.connect();
    await this.pool.statement(() => raw.run(`SET TimeZone = 'UTC'`));
    const load = await DuckDbSpanLoad.open(raw, this.schema, request, this.commitLock, this.vacuum, this.pool);
    return this.spans.track(load);
  }

  readWhole(): Promise<void> {
    return this.withConnection(async (conn) => void (await readEveryTable(conn, 'hash(r)', this.schema)));
  }

  async withConnection<T>(fn: (conn: SqlConnection) => Promise<T>): Promise<T> {
    const raw = await this.instance.connect();
    try {
      const conn = new DuckDbSqlConnection(raw, this.schema, this.pool);
      await conn.run(`SET TimeZone = 'UTC'`);
      return await fn(conn);
    } finally {
      raw.closeSync();
    }
  }

  /** Runs `fn` on a connection of its own while no commit of this process can start (a checkpoint and a copy of the file). */
  whileQuiet<T>(fn: (conn: SqlConnection) => Promise<T>): Promise<T> {
    return this.commitLock.run(() => this.withConnection(fn));
  }

  publishCopy(target: string, analysts: AnalystsPolicy): Promise<PublishedCopy> {
    return publishWarehouse(this, target, analysts);
  }

  ledgerTransaction<T>(fn: (conn: SqlConnection) => Promise<T>): Promise<T> {
    // DuckDB checks write conflicts at commit time; taking turns with span commits avoids them.
    return this.commitLock.run(() => this.withConnection((conn) => conn.transaction(() => fn(conn))));
  }

  async close(): Promise<void> {
    await this.spans.abortAll();
    this.instance.closeSync();
  }
}
