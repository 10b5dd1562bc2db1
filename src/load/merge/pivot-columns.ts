import { pivotColumnName } from '../../transform/column-names.js';
import { qualified, quoteIdent } from '../warehouse/identifiers.js';
import type { SqlConnection } from '../warehouse/sql-connection.js';
import { pivotObject, stagingName } from '../staging/staging.js';
import type { TableSpec } from '../table-spec.js';
import type { WarehouseDialect } from '../warehouse/warehouse-dialect.js';

/** A pivot column and the source key it holds. */
export interface PivotColumn {
  column: string;
  key: string;
}

/**
 * Makes sure every name staged for `spec`'s pivot has a column, inside the caller's transaction: looks the keys
 * up in `_etl_columns` (the documented map from column back to source key), names new ones, records them and
 * adds the columns. Returns every pivot column the table has, old and new, in a stable order.
 */
export async function ensurePivotColumns(
  conn: SqlConnection,
  dialect: WarehouseDialect,
  schema: string,
  spec: TableSpec,
  tables: readonly TableSpec[],
  runId: string,
  loadedAt: string,
): Promise<PivotColumn[]> {
  const pivot = spec.pivot!;
  const known = await conn.db
    .selectFrom('_etl_columns')
    .select(['column_name', 'source_key'])
    .where('table_name', '=', spec.name)
    .execute();
  const byKey = new Map(known.map((r) => [r.source_key, r.column_name]));
  const taken = new Set([
    ...known.map((r) => r.column_name),
    ...spec.columns.map((c) => c.name),
    '_window_start',
    '_run_id',
    '_loaded_at',
  ]);
  // the names of every staged object, losers' included: which columns a table has must not depend on the order
  // its windows were loaded in
  const staged = await conn.all<{ k: string }>(
    dialect.jsonObjectNames(quoteIdent(stagingName(spec.name)), quoteIdent(pivotObject(spec)), '"k"'),
  );
  // New keys are named in code point order, sorted here rather than by the database: an ORDER BY follows the
  // database's collation (a PostgreSQL in en_US sorts differently from DuckDB), and which of two colliding keys
  // gets the plain name must not depend on the warehouse.
  const keys = staged.map((r) => r.k).sort(byCodePoint);
  const added: PivotColumn[] = [];
  for (const k of keys) {
    if (byKey.has(k)) continue;
    const column = pivotColumnName(pivot.prefix, k, taken);
    taken.add(column);
    byKey.set(k, column);
    added.push({ column, key: k });
  }
  for (const { column, key } of added) {
    await conn.run(
      `ALTER TABLE ${qualified(schema, spec.name)} ADD COLUMN IF NOT EXISTS ${quoteIdent(column)} ${dialect.typeName('text')}`,
    );
    await conn.db
      .insertInto('_etl_columns')
      .values({ table_name: spec.name, column_name: column, source_key: key, added_at: loadedAt, run_id: runId })
      .execute();
  }
  return [...byKey].map(([key, column]) => ({ key, column })).sort((a, b) => byCodePoint(a.column, b.column));
}

/** Orders text by Unicode code point (the order of its UTF-8 bytes), whatever the locale. */
function byCodePoint(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
}
