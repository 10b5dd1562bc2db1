import { quoteIdent } from './identifiers.js';
import type { ColumnSpec, TableSpec } from './table-spec.js';
import type { WarehouseDialect } from './warehouse-dialect.js';

/** Name of the staging table of a target table; staging tables are temporary, one set per window load. */
export function stagingName(table: string): string {
  return `_stg_${table}`;
}

/** Staging of rejected records of the window, merged into `_etl_rejects`. */
export const REJECTS_STAGING = '_stg_rejects';

/**
 * Columns of a staging table, in append order: `_seq` (occurrence order; a child row carries its parent's),
 * `_window_start`, then the data columns.
 */
export function stagingColumns(spec: TableSpec): ColumnSpec[] {
  return [{ name: '_seq', type: 'integer' }, { name: '_window_start', type: 'date' }, ...spec.columns];
}

export const REJECT_COLUMNS: ColumnSpec[] = [
  { name: '_window_start', type: 'date' },
  { name: 'payload', type: 'text' },
  { name: 'error', type: 'text' },
];

export function createStagingSql(dialect: WarehouseDialect, name: string, columns: ColumnSpec[]): string {
  const cols = columns.map((c) => `${quoteIdent(c.name)} ${c.name === '_seq' ? 'BIGINT' : dialect.typeName(c.type)}`).join(', ');
  return `CREATE TEMP TABLE ${quoteIdent(name)} (${cols})${dialect.tempTableSuffix}`;
}
