import { quoteIdent } from '../warehouse/identifiers.js';
import type { ColumnSpec, StagedWith, TableSpec } from '../table-spec.js';
import type { WarehouseDialect } from '../warehouse/warehouse-dialect.js';

/** Name of the staging table of a target table; staging tables are temporary, one set per window load. */
export function stagingName(table: string): string {
  return `_stg_${table}`;
}

/** The table of rejected records. */
export const REJECTS_TABLE = '_etl_rejects';

/** Staging of rejected records of the window, merged into {@link REJECTS_TABLE}. */
export const REJECTS_STAGING = '_stg_rejects';

/** The table of fields loaded as NULL because their value could not be read. */
export const FIELD_REJECTS_TABLE = '_etl_field_rejects';

/** Staging of the fields of the window loaded as NULL, merged into {@link FIELD_REJECTS_TABLE}. */
export const FIELD_REJECTS_STAGING = '_stg_field_rejects';

/**
 * Columns of a staging table, in append order: `_seq` (occurrence order; a child row carries its parent's),
 * `_window_start`, then the data columns.
 */
export function stagingColumns(spec: TableSpec): ColumnSpec[] {
  return [
    { name: '_seq', type: 'integer' },
    { name: '_window_start', type: 'date' },
    ...spec.columns,
    ...(spec.stagingOnly ?? []),
  ];
}

/** The tables of a stream that have a staging table: those not staged with another table's rows. */
export function stagedTables(tables: readonly TableSpec[]): TableSpec[] {
  return tables.filter((t) => !t.stagedWith);
}

/**
 * The staged rows of `spec` (`_seq`, `_window_start` and its data columns) as SQL to read FROM: its staging table,
 * or the rows derived from the staging table it is staged with.
 */
export function stagedRows(dialect: WarehouseDialect, spec: TableSpec, tables: readonly TableSpec[]): string {
  const own = spec.stagedWith;
  if (!own) return quoteIdent(stagingName(spec.name));
  const parent = tables.find((t) => t.name === own.table);
  if (!parent || parent.stagedWith)
    throw new Error(`table ${spec.name} is staged with ${own.table}, which is not a staged table of the same stream`);
  const source = quoteIdent(stagingName(parent.name));
  if (own.kind === 'copy')
    return `(SELECT ${['_seq', '_window_start', ...spec.columns.map((c) => c.name)].map(quoteIdent).join(', ')} FROM ${source})`;
  if (own.kind === 'rows') {
    const { copied, carried } = rowColumns(spec, parent);
    return dialect.arrayRows(
      source,
      ['_seq', '_window_start', ...copied].map(quoteIdent),
      `s.${quoteIdent(own.column)}`,
      carried,
    );
  }
  const keep = [
    '_seq',
    '_window_start',
    ...spec.columns.map((c) => c.name).filter((c) => c !== own.nameColumn && c !== own.valueColumn),
  ].map(quoteIdent);
  return dialect.objectEntries(
    source,
    keep,
    dialect.jsonObject(`s.${quoteIdent(own.column)}`),
    quoteIdent(own.nameColumn),
    quoteIdent(own.valueColumn),
  );
}

/**
 * The order of a key's staged rows, the winner first: the last occurrence, or for a `latest-wins` rule with `order`,
 * the latest window, then the greatest value of that column.
 */
export function latestOrder(spec: TableSpec): string {
  const order = spec.merge.kind === 'latest-wins' ? spec.merge.order : undefined;
  return order ? `"_window_start" DESC, ${quoteIdent(order)} DESC NULLS LAST, "_seq" DESC` : '"_seq" DESC';
}

/** The `_seq` of staged rows whose key may repeat, per staged table: filled at commit from `SpanKeys`. */
export const DUPLICATES_STAGING = '_stg_duplicates';

export const DUPLICATE_COLUMNS: ColumnSpec[] = [
  { name: 'table', type: 'text' },
  { name: '_seq', type: 'integer' },
];

/** A temp table of a span's staging. */
export interface StagingTable {
  name: string;
  columns: ColumnSpec[];
}

/**
 * The temp tables a span creates: `appended`, the staging table of each staged table and the rejects' (filled as
 * pages arrive, emptied per window on a re-read); `all`, those and {@link DUPLICATES_STAGING} (filled at commit).
 */
export function spanStagingTables(tables: readonly TableSpec[]): { appended: StagingTable[]; all: StagingTable[] } {
  const appended = [
    ...stagedTables(tables).map((t) => ({ name: stagingName(t.name), columns: stagingColumns(t) })),
    { name: REJECTS_STAGING, columns: REJECT_COLUMNS },
    { name: FIELD_REJECTS_STAGING, columns: FIELD_REJECT_COLUMNS },
  ];
  return { appended, all: [...appended, { name: DUPLICATES_STAGING, columns: DUPLICATE_COLUMNS }] };
}

/** A field loaded as NULL: the key of its record, its name, the value as served (JSON) and why it could not be read. */
export const FIELD_REJECT_COLUMNS: ColumnSpec[] = [
  { name: '_window_start', type: 'date' },
  { name: 'record_key', type: 'text' },
  { name: 'field', type: 'text' },
  { name: 'raw_value', type: 'text' },
  { name: 'error', type: 'text' },
];

export const REJECT_COLUMNS: ColumnSpec[] = [
  { name: '_window_start', type: 'date' },
  { name: 'payload', type: 'text' },
  { name: 'error', type: 'text' },
];

export function createStagingSql(dialect: WarehouseDialect, name: string, columns: ColumnSpec[]): string {
  const cols = columns
    .map((c) => `${quoteIdent(c.name)} ${c.name === '_seq' ? 'BIGINT' : dialect.typeName(c.type)}`)
    .join(', ');
  return `CREATE TEMP TABLE ${quoteIdent(name)} (${cols})${dialect.tempTableSuffix}`;
}

/** The staging-only JSON object column a pivot of `spec` spreads into columns (`{name: text | null}` per row). */
export function pivotObject(spec: TableSpec): string {
  const column = spec.pivot?.column;
  if (!column || !spec.stagingOnly?.some((c) => c.name === column && c.type === 'json'))
    throw new Error(`table ${spec.name}: its pivot must read a staging-only json column, not ${String(column)}`);
  return column;
}

/**
 * The columns of a table staged as `rows` of `parent`: those `parent` has too (`copied`, from its staged row) and
 * the others (`carried`, in the order each element of the array holds them).
 */
export function rowColumns(spec: TableSpec, parent: TableSpec): { copied: string[]; carried: ColumnSpec[] } {
  const own = new Set(parent.columns.map((c) => c.name));
  return {
    copied: spec.columns.filter((c) => own.has(c.name)).map((c) => c.name),
    carried: spec.columns.filter((c) => !own.has(c.name)),
  };
}

/** Whether `column` of a table staged with another's rows is that table's own column, read from its staged row. */
export function copiedFromParent(own: StagedWith, spec: TableSpec, parent: TableSpec, column: string): boolean {
  if (own.kind === 'copy') return true;
  if (own.kind === 'entries') return column !== own.nameColumn && column !== own.valueColumn;
  return rowColumns(spec, parent).copied.includes(column);
}
