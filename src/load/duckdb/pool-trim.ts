import type { DuckDBConnection } from '@duckdb/node-api';
import type { StatementGate } from './duckdb-connection.js';

/**
 * Gives back, after each span commit, the table pages DuckDB's buffer pool cached while the merges read the targets:
 * the pool keeps every page it reads up to `memory_limit`, and the targets grow with a backfill, so without a trim
 * memory would grow with the range instead of the work in flight.
 *
 * The limit is lowered for a moment by the table pages only: DuckDB evicts the file's pages first, and anything more
 * would write the spans' staged rows to the temp directory, to be read back at their next append. While the limit is
 * low any allocation may fail, setting it back included, so a trim waits for the statements under way on every
 * connection of the instance, and statements ({@link statement}) and appends ({@link withoutTrim}) wait for the trim.
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
 * its limit that fails, leaving the instance at the small limit.
 */
export const POOL_TRIM_HEADROOM = 4_000_000n;
