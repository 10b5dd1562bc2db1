import type { DuckDBConnection } from '@duckdb/node-api';
import type { StatementGate } from './duckdb-connection.js';

/**
 * Gives back, after each span commit, the table pages DuckDB's buffer pool keeps of what the merges read.
 *
 * DuckDB keeps every page it reads until the pool reaches `memory_limit`; the merges of a backfill read the
 * targets, which grow with it, so the pool held more the longer the backfill ran (a 300-day backfill of every
 * stream peaked at 326–331 MB, and at 289 MB with a trim after each commit; over 30 days, 235 and 223 MB). Setting
 * the limit lower makes DuckDB drop cached pages, and the limit is then set back. Nothing else may need memory
 * while the pool is small: a statement allocating then fails, and so may setting the limit back. So a trim waits
 * for the statements under way on every connection of the instance, and statements ({@link statement}) and appends
 * ({@link withoutTrim}) wait for the trim.
 *
 * The limit goes down by the table pages only, so that nothing else is evicted: DuckDB evicts pages of the database
 * file first (they are dropped, and read again from the file when needed), then blocks of its own (staging tables,
 * rows not yet checkpointed), which it must write to its temp directory and read back. A trim down to a fixed 32MB
 * kept up to 32MB of table pages when the spans in flight had little staged, so what it kept grew with the
 * warehouse, and wrote their staging to disk when they had more. Over 300 days of every stream the two ran alike
 * (129.4 s and 146.0 CPU s against 129.0 s and 145.5 CPU s, peaks of 277 and 289 MB, run one after the other; six
 * more runs of either peaked at 284–293 MB). Evicting everything (a limit of 1MB) brought that peak down to 272–281
 * MB, but each commit then wrote every other span's staging to disk, to be read back at its next append: 145 and
 * 174 CPU s in two runs, against 139–146.
 */
export class PoolTrim implements StatementGate {
  private trimming: Promise<void> | undefined;
  /** Statements under way, and what a trim waiting for them to end is told when they have. */
  private running = 0;
  private drained: (() => void) | undefined;

  constructor(
    /** The instance's `memory_limit`, as configured. */
    private readonly limit: string,
  ) {}

  /**
   * Runs synchronous work on the instance (appending rows, flushing or closing appenders) once no trim is under
   * way: the work has no `await`, so no trim can start before it is done.
   */
  async withoutTrim<T>(work: () => T): Promise<T> {
    while (this.trimming) await this.trimming;
    return work();
  }

  /**
   * Runs one statement (a single call into DuckDB, never one that waits for another statement): after the trim
   * under way, if any, and counted, so that a trim starting meanwhile waits for it to end.
   */
  async statement<T>(run: () => Promise<T>): Promise<T> {
    try {
      return await this.withoutTrim(() => {
        this.running++;
        return run();
      });
    } finally {
      if (--this.running === 0) this.drained?.();
    }
  }

  /** Lowers the limit by the table pages the pool holds, then sets it back; run under the commit lock. */
  async trim(conn: DuckDBConnection): Promise<void> {
    let done!: () => void;
    this.trimming = new Promise((resolve) => (done = resolve));
    try {
      if (this.running > 0) await new Promise<void>((resolve) => (this.drained = resolve));
      this.drained = undefined;
      const [[others, tables]] = (await conn.runAndReadAll(POOL_USE)).getRows() as [[bigint, bigint]];
      if (tables > POOL_TRIM_HEADROOM) await this.lowerForAMoment(conn, others + POOL_TRIM_HEADROOM);
    } finally {
      this.trimming = undefined;
      done();
    }
  }

  private async lowerForAMoment(conn: DuckDBConnection, bytes: bigint): Promise<void> {
    try {
      // DuckDB evicts before it checks the new limit: should blocks pinned right now keep the pool above it, the
      // table pages are gone all the same, and the limit stays as it was
      await conn.run(`SET GLOBAL memory_limit = '${bytes}B'`).catch(() => undefined);
    } finally {
      await conn.run(`SET GLOBAL memory_limit = '${this.limit}'`);
    }
  }
}

/** Bytes the buffer pool holds: for other than the database file's table pages, and for those. */
const POOL_USE = `SELECT CAST(coalesce(sum(memory_usage_bytes) FILTER (WHERE tag <> 'BASE_TABLE'), 0) AS UBIGINT), CAST(coalesce(sum(memory_usage_bytes) FILTER (WHERE tag = 'BASE_TABLE'), 0) AS UBIGINT) FROM duckdb_memory()`;

/**
 * What a trim leaves above the pool's other blocks: setting the limit back allocates too, and with the pool full to
 * its limit it fails ("failed to allocate data of size 2.0 KiB (30.7 MiB/30.5 MiB used)"), leaving the instance
 * at the small limit.
 */
export const POOL_TRIM_HEADROOM = 4_000_000n;
