import type { SqlConnection } from '../load/warehouse/sql-connection.js';

/** A row of `_etl_schema_changes`: a change of what analysts read. */
export interface SchemaChangeRow {
  changed_at: string;
  run_id: string;
  object_name: string;
  column_name: string | null;
  change: string;
  from_type: string | null;
  to_type: string | null;
  source_key: string | null;
  reason: string;
  value_count: number | null;
}

/**
 * The changes of what analysts read, the newest first: those of one run (`runId`), or the last `limit` of all. A
 * warehouse made before the table was kept has none.
 */
export async function readSchemaChanges(
  conn: SqlConnection,
  which: { runId?: string; limit?: number } = {},
): Promise<{ changes: SchemaChangeRow[]; total: number }> {
  const where = which.runId === undefined ? '' : 'WHERE run_id = $1';
  const params = which.runId === undefined ? [] : [which.runId];
  const table = `${conn.schemaSql}._etl_schema_changes`;
  const exists = await conn.all(
    `SELECT 1 FROM information_schema.tables WHERE table_catalog = current_database() AND table_schema = $1 AND table_name = '_etl_schema_changes'`,
    [conn.schemaSql.slice(1, -1).replace(/""/g, '"')],
  );
  if (exists.length === 0) return { changes: [], total: 0 };
  const [count] = await conn.all<{ n: number | bigint | string }>(
    `SELECT COUNT(*) AS n FROM ${table} ${where}`,
    params,
  );
  const rows = await conn.all<SchemaChangeRow & { changed_at: unknown; value_count: number | bigint | null }>(
    `SELECT CAST(changed_at AS VARCHAR) AS changed_at, run_id, object_name, column_name, change, from_type, to_type, source_key, reason, value_count
       FROM ${table} ${where} ORDER BY changed_at DESC, object_name, column_name${which.limit === undefined ? '' : ` LIMIT ${Math.floor(which.limit)}`}`,
    params,
  );
  return {
    changes: rows.map((r) => ({
      ...r,
      changed_at: String(r.changed_at),
      value_count: r.value_count === null ? null : Number(r.value_count),
    })),
    total: Number(count?.n ?? 0),
  };
}

/** A change in one line: where, what, and why. */
export function schemaChangeLine(c: SchemaChangeRow): string {
  const where = c.column_name === null ? c.object_name : `${c.object_name}.${c.column_name}`;
  const types = c.from_type || c.to_type ? ` (${c.from_type ?? '—'} → ${c.to_type ?? '—'})` : '';
  return `${where}: ${c.change.replace(/_/g, ' ')}${types}: ${c.reason}`;
}

/** Changes an analyst must react to before those that only add: values that no longer fit, then the rest. */
export function byUrgency(a: SchemaChangeRow, b: SchemaChangeRow): number {
  const rank = (c: SchemaChangeRow) => (c.change === 'view_added' || c.change === 'column_added' ? 1 : 0);
  return rank(a) - rank(b);
}
