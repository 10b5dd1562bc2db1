import type { DuckDBConnection } from '@duckdb/node-api';
import { sizeBytes } from '../../config/config-schema.js';
import type { StatementGate } from './duckdb-connection.js';

/**
 * What DuckDB's buffer pool keeps between two span commits: {@link PoolTrim} lowers the limit to this for a
 * moment.
 */
export const POOL_KEPT_BETWEEN_COMMITS = '32MB';

/**
 * Gives back, after each span commit, the table pages DuckDB's buffer pool keeps of what the merges read.
 *
 * DuckDB keeps every page it reads until the pool reaches `memory_limit`; the merges of a backfill read the
 * targets, which grow with it, so the pool held more the longer the backfill ran (a 300-day backfill of every
 * stream peaked at 326–331 MB, and at 289 MB with a trim after each commit; over 30 days, 235 and 223 MB). Setting
 * the limit lower makes DuckDB drop cached pages and write temp blocks beyond it to its temp directory; the limit
 * is then set back. Nothing else may need memory while the pool is small: a statement allocating then fails, and
 * so may setting the limit back. So a trim waits for the statements under way on every connection of the instance,
 * and statements ({@link statement}) and appends ({@link withoutTrim}) wait for the trim.
 */
export class PoolTrim implements StatementGate {
  private trimming: Promise<void> | undefined;
  /** Statements under way, and what a trim waiting for them to end is told when they have. */
  private running = 0;
  private drained: (() => void) | undefined;
  /** A limit at or below what the pool keeps has nothing to give back. */
  private readonly trims: boolean;

  constructor(
    /** The instance's `memory_limit`, as configured. */
    private readonly limit: string,
  ) {
    this.trims = sizeBytes(limit) > sizeBytes(POOL_KEPT_BETWEEN_COMMITS);
  }

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

  /** Lowers the pool to {@link POOL_KEPT_BETWEEN_COMMITS} and back to the limit; run under the commit lock. */
  async trim(conn: DuckDBConnection): Promise<void> {
    if (!this.trims) return;
    let done!: () => void;
    this.trimming = new Promise((resolve) => (done = resolve));
    try {
      if (this.running > 0) await new Promise<void>((resolve) => (this.drained = resolve));
      this.drained = undefined;
      // DuckDB refuses a limit below the blocks pinned right now (other spans' appenders): then nothing is trimmed
      await conn.run(`SET GLOBAL memory_limit = '${POOL_KEPT_BETWEEN_COMMITS}'`).catch(() => undefined);
    } finally {
      try {
        await conn.run(`SET GLOBAL memory_limit = '${this.limit}'`);
      } finally {
        this.trimming = undefined;
        done();
      }
    }
  }
}
