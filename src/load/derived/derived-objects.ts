import type { SqlConnection } from '../warehouse/sql-connection.js';
import type { TableSpec } from '../table-spec.js';
import { refreshSurveyCatalog } from './survey-catalog.js';
import { commentWarehouse } from '../catalog/table-comments.js';
import { refreshAnalystViews } from './analyst-views.js';
import { refreshTypedFields, TYPED_TABLE, TYPED_VIEW } from './typed-fields.js';
import type { SchemaChangeLog } from './schema-contract.js';
import type { WarehouseDialect } from '../warehouse/warehouse-dialect.js';

/**
 * Rebuilds what the span's tables declare as derived from them (`TableSpec.derived`), after their merge and in the
 * same transaction: an analyst never sees `surveys` or a view out of step with the rows. What the commit changed of
 * the schema analysts read (`changes`, begun before the merge) is recorded here too.
 */
export async function refreshDerived(
  conn: SqlConnection,
  dialect: WarehouseDialect,
  schema: string,
  span: { tables: TableSpec[]; runId: string; loadedAt: string },
  changes: SchemaChangeLog,
): Promise<void> {
  const stamp = { runId: span.runId, now: span.loadedAt };
  for (const spec of span.tables) {
    if (spec.derived === 'surveys')
      await refreshSurveyCatalog(
        conn,
        dialect,
        schema,
        { name: spec.name, columns: spec.columns.map((c) => c.name) },
        stamp,
        changes,
      );
    // a pivot's table stages the texts to read; profile_fields only says how to read them
    if (spec.derived === 'typed-fields')
      await refreshTypedFields(
        conn,
        dialect,
        schema,
        spec.pivot ? { accounts: spec, tables: span.tables } : undefined,
        stamp,
        changes,
      );
  }
  // recorded before the descriptions are written: a column added for a new type is described from its record
  await changes.finish(conn, schema, stamp);
  // a new cf_ column, survey view or question column is described in the commit that makes it
  if (span.tables.some((spec) => spec.derived)) {
    await commentWarehouse(conn, dialect, schema);
    await refreshAnalystViews(conn, dialect, schema, stamp);
  }
}

/** The views that offer a table's pivot columns again (`accounts_typed` for `accounts`). */
export function typedViewsOf(table: string): string[] {
  return table === TYPED_TABLE ? [TYPED_VIEW] : [];
}
