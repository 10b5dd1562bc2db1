import { mkdirSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { dirname, resolve } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { migrate } from '../migrate.js';
import { OpenSpans } from '../released-span-load.js';
import { Mutex } from '../mutex.js';
import { quoteIdent } from '../identifiers.js';
import type { Destination, PublishedCopy, SpanLoad, SpanLoadRequest } from '../destination.js';
import type { SqlConnection } from '../sql-connection.js';
import { DuckDbSqlConnection } from './duckdb-connection.js';
import { DuckDbSpanLoad } from './duckdb-span-load.js';
import { DeferredVacuum } from './deferred-vacuum.js';
import { PoolTrim } from './pool-trim.js';
import { publishWarehouse } from './publish.js';

/**
 * What DuckDB's buffer manager may hold by default (`destination.memory_limit`): data pages, staging tables,
 * sorts and joins, which spill to `<warehouse>.tmp/` beyond it. DuckDB's own default (80% of the machine's
 * memory) lets one load take gigabytes. A backfill of a year of a million account records (spans of a month, four
 * at a time) loads with 128 MB and runs out of memory in a merge with 96 MB; 256 MB leaves room for denser
 * records. A lower limit hardly lowers the peak of a 300-day backfill of every stream, whose pool gives back its cached
 * pages after each commit ({@link PoolTrim}): 290 MB with 128 MB against 289 MB with 256 MB, one run each.
 */
export const DEFAULT_MEMORY_LIMIT = '256MB';

/**
 * DuckDB's worker threads by default (`destination.threads`): the machine's cores but one, which the pipeline's own
 * thread keeps busy parsing and checking records, handing them to the appenders; DuckDB's own default is every core.
 * On two cores, one DuckDB thread ran a 300-day backfill of every stream with 130–136 CPU s against 139–168 and
 * peaked at 283–287 MB against 287–297 MB; a year of a million account records was read in 54.8 s against 67.6 s,
 * while the loader alone (nothing else running) took 28.2 and 23.9 s against 27.5 s.
 */
export function defaultDuckDbThreads(): number {
  return Math.max(1, availableParallelism() - 1);
}

/** The jobs file's DuckDB settings (`destination.memory_limit`, `destination.checkpoint_threshold`, `destination.threads`). */
export interface DuckDbSettings {
  memoryLimit?: string;
  /**
   * Write-ahead log gathered before a checkpoint. DuckDB's 16MB checkpoints after every commit of a long backfill;
   * a larger one checkpoints less often, but holds more memory and leaves more log to replay after a crash. With
   * deleted rows compacted in batches ({@link DeferredVacuum}), 1GB no longer loaded a million account records
   * faster (26.4 s against 25.9 s).
   */
  checkpointThreshold?: string;
  /** DuckDB's worker threads; {@link defaultDuckDbThreads} unless set. */
  threads?: number;
}

/** The warehouse file is open in another process; DuckDB allows one writer process per file. */
export class WarehouseBusyError extends Error {
  override readonly name = 'WarehouseBusyError';
  constructor(
    message: string,
    /** The process holding the file, when DuckDB names it. */
    readonly holderPid?: number,
  ) {
    super(message);
  }
}

/** DuckDB: a single file, one process, parallel windows whose commits take turns. */
export class DuckDbDestination implements Destination {
  readonly name = 'duckdb';
  readonly capabilities = { multiProcess: false, rowLocks: false, declaredKeys: false };
  private readonly commitLock = new Mutex();
  private readonly spans = new OpenSpans();

  private constructor(
    private readonly instance: DuckDBInstance,
    readonly path: string,
    readonly schema: string,
    private readonly vacuum: DeferredVacuum,
    private readonly pool: PoolTrim,
  ) {}

  /** Opens (or creates) the warehouse file. */
  static async open(path: string, schema = 'main', settings: DuckDbSettings = {}): Promise<DuckDbDestination> {
    const file = path === ':memory:' ? path : resolve(path);
    if (file !== ':memory:') mkdirSync(dirname(file), { recursive: true });
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
        return new DuckDbDestination(instance, file, schema, await DeferredVacuum.install(new DuckDbSqlConnection(raw, schema)), new PoolTrim(memoryLimit));
      } finally {
        raw.closeSync();
      }
    } catch (error) {
      const message = (error as Error).message;
      if (/lock/i.test(message)) {
        const pid = /PID (\d+)/.exec(message)?.[1];
        throw new WarehouseBusyError(`warehouse ${file} is in use by another process${pid ? ` (PID ${pid})` : ''}; DuckDB allows one process per file`, pid ? Number(pid) : undefined);
      }
      throw error;
    }
  }

  describe(): string {
    return `duckdb ${this.path} (schema ${this.schema})`;
  }

  async migrate(): Promise<void> {
    await this.withConnection(async (conn) => {
      await conn.run(`CREATE SCHEMA IF NOT EXISTS ${quoteIdent(this.schema)}`);
      await conn.run(`SET schema = '${this.schema.replaceAll("'", "''")}'`);
      await migrate(conn, 'duckdb', this.schema, new Date().toISOString());
    });
  }

  async openSpan(request: SpanLoadRequest): Promise<SpanLoad> {
    const raw = await this.instance.connect();
    await this.pool.statement(() => raw.run(`SET TimeZone = 'UTC'`));
    const load = await DuckDbSpanLoad.open(raw, this.schema, request, this.commitLock, this.vacuum, this.pool);
    return this.spans.track(load);
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

  publishCopy(target: string): Promise<PublishedCopy> {
    return publishWarehouse(this, target);
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
