import type { SqlConnection } from '../../src/load/warehouse/sql-connection.js';

/**
 * Tables of the run's own bookkeeping: who ran when, not what the source said. `_etl_schema_changes` says when each
 * load changed what analysts read: loads that group the same windows otherwise record other changes.
 */
const BOOKKEEPING = new Set([
  '_etl_runs',
  '_etl_locks',
  '_etl_backfills',
  '_etl_windows',
  '_etl_watermarks',
  '_etl_rate_shares',
  '_etl_migrations',
  '_etl_event_bookmarks',
  '_etl_schema_changes',
  '_etl_releases',
  '_etl_pii_key',
]);

/** Columns that say which load wrote a row and when, not what the source said. */
const LOAD_COLUMNS = /^(_run_id|_loaded_at|run_id|rejected_at|updated_at|loaded_at|added_at)$/;

/**
 * Every table of the warehouse's schema (its bookkeeping aside) as sorted lines of text, the columns naming
 * the load that wrote a row left out (and those `leaveOut` names): two warehouses that hold the same data dump equal,
 * whichever loads wrote it.
 */
export async function dumpTables(
  conn: SqlConnection,
  schema: string,
  leaveOut: (table: string, column: string) => boolean = () => false,
): Promise<Map<string, string[]>> {
  const columns = await conn.all<{ table_name: string; column_name: string }>(
    `SELECT c.table_name, c.column_name FROM information_schema.columns c
       JOIN information_schema.tables t ON t.table_schema = c.table_schema AND t.table_name = c.table_name
      WHERE c.table_schema = $1 AND t.table_type = 'BASE TABLE'
      ORDER BY c.table_name, c.ordinal_position`,
    [schema],
  );
  const byTable = new Map<string, string[]>();
  for (const c of columns) {
    if (BOOKKEEPING.has(c.table_name) || LOAD_COLUMNS.test(c.column_name) || leaveOut(c.table_name, c.column_name))
      continue;
    const list = byTable.get(c.table_name) ?? [];
    list.push(c.column_name);
    byTable.set(c.table_name, list);
  }
  const dump = new Map<string, string[]>();
  for (const [table, cols] of byTable) {
    const select = cols
      .map((c) => `CAST("${c.replaceAll('"', '""')}" AS VARCHAR) AS "${c.replaceAll('"', '""')}"`)
      .join(', ');
    const rows = await conn.all<Record<string, string | null>>(
      `SELECT ${select} FROM ${conn.schemaSql}."${table.replaceAll('"', '""')}"`,
    );
    dump.set(table, rows.map((r) => JSON.stringify(cols.map((c) => r[c]))).sort());
  }
  return dump;
}
