import { parseTypedValue, type FieldKind, type FieldType } from '../../transform/typed-values.js';
import { qualified, quoteIdent, quoteLiteral } from '../warehouse/identifiers.js';
import type { SqlConnection } from '../warehouse/sql-connection.js';
import { pivotObject, stagingName } from '../staging/staging.js';
import type { ColumnType, TableSpec } from '../table-spec.js';
import type { WarehouseDialect } from '../warehouse/warehouse-dialect.js';

/** The table whose `cf_` columns are typed (`typed-fields.ts`). */
const TYPED_TABLE = 'accounts';

/** The warehouse type of each kind of field. */
export const TYPE_OF_KIND: Readonly<Record<FieldKind, ColumnType>> = {
  date: 'date',
  number: 'double',
  boolean: 'boolean',
  label: 'text',
};

/** A typed `cf_` column, as `_etl_typed_columns` holds it. */
export interface TypedColumn {
  column_name: string;
  typed_column: string;
  source_key: string;
  kind: FieldKind;
  format: string | null;
}

/** Texts inserted into `_etl_typed_values` per statement. */
export const VALUES_PER_INSERT = 2000;

/** The texts of typed fields the span staged that `_etl_typed_values` does not hold yet, read as their types. */
export async function parseStagedTexts(
  conn: SqlConnection,
  dialect: WarehouseDialect,
  schema: string,
  accounts: TableSpec,
  typed: TypedColumn[],
): Promise<void> {
  if (typed.length === 0) return;
  // the texts the cf_ columns take: the entries of each staged row's object of custom fields
  const entries = dialect.objectEntries(
    quoteIdent(stagingName(accounts.name)),
    ['"_seq"'],
    dialect.jsonObject(`s.${quoteIdent(pivotObject(accounts))}`),
    '"name"',
    '"value"',
  );
  const rows = await conn.all<{ column_name: string; value: string }>(
    `SELECT DISTINCT t.column_name, st."value" AS value
       FROM ${entries} st
       JOIN ${qualified(schema, '_etl_typed_columns')} t ON t.table_name = $1 AND t.source_key = st."name"
       LEFT JOIN ${qualified(schema, '_etl_typed_values')} v ON v.column_name = t.column_name AND v.raw_value = st."value"
      WHERE st."value" IS NOT NULL AND v.column_name IS NULL`,
    [TYPED_TABLE],
  );
  const byColumn = new Map(typed.map((t) => [t.column_name, t]));
  const texts = new Map<string, string[]>();
  for (const r of rows) texts.set(r.column_name, [...(texts.get(r.column_name) ?? []), r.value]);
  for (const [column, values] of texts) {
    const t = byColumn.get(column);
    if (t) await insertParsed(conn, dialect, schema, { kind: t.kind, format: t.format }, column, values);
  }
}

/**
 * Adds `texts` of `column` with their values read as `type`. A batch is bound as one JSON array of [text, value]
 * pairs, since DuckDB binds a parameter per value slowly.
 */
export async function insertParsed(
  conn: SqlConnection,
  dialect: WarehouseDialect,
  schema: string,
  type: FieldType,
  column: string,
  texts: string[],
): Promise<void> {
  const pairs = dialect.arrayRows(
    `(SELECT CAST($1 AS ${dialect.typeName('text')}) AS "column_name", CAST($2 AS ${dialect.typeName('json')}) AS "_pairs")`,
    ['"column_name"'],
    's."_pairs"',
    [
      { name: 'raw_value', type: 'text' },
      { name: 'value', type: 'text' },
    ],
  );
  for (let i = 0; i < texts.length; i += VALUES_PER_INSERT) {
    const batch = texts.slice(i, i + VALUES_PER_INSERT).map((text) => [text, parseTypedValue(type, text)]);
    await conn.run(
      `INSERT INTO ${qualified(schema, '_etl_typed_values')} (column_name, raw_value, value) SELECT "column_name", "raw_value", "value" FROM ${pairs} p`,
      [column, JSON.stringify(batch)],
    );
  }
}

/**
 * Every column of `accounts`, named one by one (PostgreSQL fixes a view's `*` when it is made, so a new `cf_` column
 * changes the definition and the view is made again), each typed field's column right after its text.
 */
export function typedViewSql(
  dialect: WarehouseDialect,
  schema: string,
  columns: string[],
  typed: TypedColumn[],
): string {
  const byColumn = new Map(typed.map((t) => [t.column_name, t]));
  const select: string[] = [];
  const joins: string[] = [];
  for (const column_name of columns) {
    select.push(`a.${quoteIdent(column_name)}`);
    const t = byColumn.get(column_name);
    if (!t) continue;
    const v = `v${joins.length}`;
    select.push(`CAST(${v}."value" AS ${dialect.typeName(TYPE_OF_KIND[t.kind])}) AS ${quoteIdent(t.typed_column)}`);
    joins.push(
      `LEFT JOIN ${qualified(schema, '_etl_typed_values')} ${v} ON ${v}."column_name" = ${quoteLiteral(column_name)} AND ${v}."raw_value" = a.${quoteIdent(column_name)}`,
    );
  }
  return `SELECT ${select.join(', ')} FROM ${qualified(schema, TYPED_TABLE)} a${joins.map((j) => ` ${j}`).join('')}`;
}
