import { qualified } from '../warehouse/identifiers.js';
import type { SqlConnection } from '../warehouse/sql-connection.js';

/** A table's rows as DuckDB stores them: `dead` were deleted but still take up space in its row groups. */
export interface TableRows {
  table: string;
  live: number;
  dead: number;
}

/**
 * When DuckDB should compact a table's deleted rows away: once they reach `deadShare` of its live rows, and at
 * least `minDeadRows` (below a row group's worth, compacting frees next to nothing).
 */
export interface VacuumPolicy {
  deadShare: number;
  minDeadRows: number;
}

/**
 * Dead rows may reach half the live ones. DuckDB's own compaction leaves row groups three quarters full (it merges
 * at most four row groups into three), so a compacted table is back under the threshold.
 */
export const DEFAULT_VACUUM_POLICY: VacuumPolicy = { deadShare: 0.5, minDeadRows: 122_880 };

/**
 * Compacts deleted rows in batches instead of at every checkpoint.
 *
 * A merge deletes the rows that newer versions replace, all over a table. At each checkpoint, DuckDB merges row
 * groups that lost rows (vacuum); with a checkpoint per span commit, a backfill rewrote its tables over and over,
 * and each commit took longer than the last as the tables grew. So vacuum is off (`max_vacuum_tasks = 0`) except
 * for the commit of a table whose dead rows reached the policy's share: that commit, and a checkpoint right after
 * it, compact the table in one go. Compaction then costs time in proportion to the rows deleted, however many
 * commits delete them.
 *
 * Runs under the destination's commit lock: the setting is global and applies to any checkpoint while it is on.
 */
export class DeferredVacuum {
  private constructor(
    /** DuckDB's `max_vacuum_tasks` when compaction is on (its own default). */
    private readonly tasks: number,
    private readonly policy: VacuumPolicy,
  ) {}

  /** Turns vacuum off on the instance `conn` belongs to. */
  static async install(conn: SqlConnection, policy: VacuumPolicy = DEFAULT_VACUUM_POLICY): Promise<DeferredVacuum> {
    const [row] = await conn.all<{ tasks: number | string }>(`SELECT current_setting('max_vacuum_tasks') AS tasks`);
    const vacuum = new DeferredVacuum(Number(row!.tasks), policy);
    await vacuum.setTasks(conn, 0);
    return vacuum;
  }

  /**
   * Runs `commit` (a transaction writing `tables` of `schema`), with compaction on if one of the tables is due for
   * it: checked before the transaction, on what earlier commits left, so a process that commits once (a nightly
   * run) still compacts what earlier runs left.
   */
  async commit<T>(
    conn: SqlConnection,
    schema: string,
    tables: readonly string[],
    commit: () => Promise<T>,
  ): Promise<T> {
    const due = (await tableRows(conn, schema, tables)).some((t) => this.isDue(t));
    if (!due) return commit();
    await this.setTasks(conn, this.tasks);
    try {
      const result = await commit();
      // A small commit goes to the write-ahead log without a checkpoint: compact now, while vacuum is on.
      // The commit holds either way; should this fail, the next commit finds the table still due.
      await conn.run('CHECKPOINT').catch(() => undefined);
      return result;
    } finally {
      await this.setTasks(conn, 0);
    }
  }

  private isDue(rows: TableRows): boolean {
    return rows.dead >= Math.max(this.policy.minDeadRows, this.policy.deadShare * rows.live);
  }

  private async setTasks(conn: SqlConnection, tasks: number): Promise<void> {
    await conn.run(`SET GLOBAL max_vacuum_tasks = ${Math.trunc(tasks)}`);
  }
}

/**
 * Live and dead rows of `tables` in `schema`. DuckDB's `estimated_size` counts the rows its row groups hold,
 * deleted ones included; `COUNT(*)` counts the live ones, from row group metadata.
 */
export async function tableRows(conn: SqlConnection, schema: string, tables: readonly string[]): Promise<TableRows[]> {
  if (tables.length === 0) return [];
  const stored = await conn.all<{ table_name: string; estimated_size: number | string }>(
    `SELECT table_name, estimated_size FROM duckdb_tables() WHERE database_name = current_database() AND schema_name = $1 AND table_name IN (${tables.map((_, i) => `$${i + 2}`).join(', ')})`,
    [schema, ...tables],
  );
  const counts = stored.map((s, i) => `SELECT ${i} AS i, COUNT(*) AS live FROM ${qualified(schema, s.table_name)}`);
  if (counts.length === 0) return [];
  const live = await conn.all<{ i: number | string; live: number | string }>(counts.join(' UNION ALL '));
  return live.map((l) => {
    const s = stored[Number(l.i)]!;
    return { table: s.table_name, live: Number(l.live), dead: Math.max(0, Number(s.estimated_size) - Number(l.live)) };
  });
}
