import type { DuckDBConnection } from '@duckdb/node-api';
import { sizeBytes } from '../../config/config-schema.js';

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
 * is then set back. Appends wait for the trim ({@link pending}): none may need a block of the pool while it is
 * small.
 */
export class PoolTrim {
  private trimming: Promise<void> | undefined;
  /** A limit at or below what the pool keeps has nothing to give back. */
  private readonly trims: boolean;

  constructor(
    /** The instance's `memory_limit`, as configured. */
    private readonly limit: string,
  ) {
    this.trims = sizeBytes(limit) > sizeBytes(POOL_KEPT_BETWEEN_COMMITS);
  }

  /**
   * The trim under way, if one is: an append waits for it, then asks again, and appends only when it is told none
   * is (with no `await` in between, a trim cannot start before it is done).
   */
  pending(): Promise<void> | undefined {
    return this.trimming;
  }

  /** Lowers the pool to {@link POOL_KEPT_BETWEEN_COMMITS} and back to the limit; run under the commit lock. */
  async trim(conn: DuckDBConnection): Promise<void> {
    if (!this.trims) return;
    let done!: () => void;
    this.trimming = new Promise((resolve) => (done = resolve));
    try {
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
