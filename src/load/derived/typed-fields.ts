import { keySuffix } from '../../transform/column-names.js';
import {
  choiceTypeOf,
  formatTypeOf,
  parseTypedValue,
  type FieldKind,
  type FieldType,
} from '../../transform/typed-values.js';
import { answerTypeOf, type AnswerCounts, type AnswerType } from './answer-types.js';
import { qualified, quoteIdent, quoteLiteral } from '../warehouse/identifiers.js';
import { replaceView, type ViewStamp } from './replace-view.js';
import type { SqlConnection } from '../warehouse/sql-connection.js';
import { pivotObject, stagingName } from '../staging/staging.js';
import type { ColumnType, TableSpec } from '../table-spec.js';
import { readTypeEvidence } from './type-evidence.js';
import type { WarehouseDialect } from '../warehouse/warehouse-dialect.js';

/**
 * The table whose `cf_` columns are typed, its long form (`field_name`, `value`), and the view that offers them
 * typed. Named here because a commit of `profile_fields` alone types them too.
 */
const TYPED_TABLE = 'accounts';
const LONG_TABLE = 'account_custom_fields';
const TYPED_VIEW = 'accounts_typed';

/** The warehouse type of each kind of field. */
const TYPE_OF_KIND: Readonly<Record<FieldKind, ColumnType>> = {
  date: 'date',
  number: 'double',
  boolean: 'boolean',
  label: 'text',
};

/** A typed `cf_` column, as `_etl_typed_columns` holds it. */
interface TypedColumn {
  column_name: string;
  typed_column: string;
  source_key: string;
  kind: FieldKind;
  format: string | null;
}

/** Texts inserted into `_etl_typed_values` per statement. */
const VALUES_PER_INSERT = 2000;

/**
 * Keeps typed `cf_` columns current, inside a commit that merged `accounts` (new texts of typed fields) or
 * `profile_fields` (a field's type or format may have changed): each distinct text of a typed field is read as its
 * type once (`_etl_typed_values`, NULL where it is no value of the type), and the view `accounts_typed` offers every
 * column of `accounts` with each typed field's column beside its text. A field whose type or format changed is read
 * again whole; otherwise only the texts the span staged that are not held yet are read.
 *
 * `staged` is `accounts` with the span's tables when the span staged accounts: their custom fields are there to read.
 */
export async function refreshTypedFields(
  conn: SqlConnection,
  dialect: WarehouseDialect,
  schema: string,
  staged: { accounts: TableSpec; tables: readonly TableSpec[] } | undefined,
  stamp: ViewStamp,
): Promise<void> {
  const wanted = await typedFields(conn, dialect, schema, stamp);
  const current = new Map(
    (
      await conn.all<TypedColumn>(
        `SELECT column_name, typed_column, source_key, kind, format FROM ${qualified(schema, '_etl_typed_columns')} WHERE table_name = $1`,
        [TYPED_TABLE],
      )
    ).map((c) => [c.column_name, c] as const),
  );
  // the table's columns as they are, pivot columns included, in their order
  const columns = (
    await conn.all<{ column_name: string }>(
      `SELECT column_name FROM information_schema.columns WHERE table_catalog = current_database() AND table_schema = $1 AND table_name = $2 ORDER BY ordinal_position`,
      [schema, TYPED_TABLE],
    )
  ).map((c) => c.column_name);
  const taken = new Set(columns);
  for (const c of current.values()) taken.add(c.typed_column);
  const typed: TypedColumn[] = [];
  for (const [column, { key, type }] of wanted) {
    const before = current.get(column);
    if (before && before.kind === type.kind && (before.format ?? null) === type.format) {
      typed.push(before);
      continue;
    }
    const typedColumn = before?.kind === type.kind ? before.typed_column : typedColumnName(column, type.kind, taken);
    taken.add(typedColumn);
    const entry: TypedColumn = {
      column_name: column,
      typed_column: typedColumn,
      source_key: key,
      kind: type.kind,
      format: type.format,
    };
    await forgetColumn(conn, schema, column);
    await conn.run(
      `INSERT INTO ${qualified(schema, '_etl_typed_columns')} (table_name, column_name, typed_column, source_key, kind, format, updated_at, run_id) VALUES ($1, $2, $3, $4, $5, $6, CAST($7 AS TIMESTAMPTZ), $8)`,
      [TYPED_TABLE, column, typedColumn, key, type.kind, type.format, stamp.now, stamp.runId],
    );
    // every text the field holds now, read with its new type
    const texts = await conn.all<{ value: string }>(
      `SELECT DISTINCT value FROM ${qualified(schema, LONG_TABLE)} WHERE field_name = $1 AND value IS NOT NULL`,
      [key],
    );
    await insertParsed(
      conn,
      dialect,
      schema,
      type,
      column,
      texts.map((t) => t.value),
    );
    typed.push(entry);
  }
  for (const column of current.keys()) if (!wanted.has(column)) await forgetColumn(conn, schema, column);
  if (staged) await parseStagedTexts(conn, dialect, schema, staged.accounts, typed);
  await replaceView(conn, schema, TYPED_VIEW, typedViewSql(dialect, schema, columns, typed), stamp);
}

/**
 * The typed `cf_` columns: column → its key and type. A field's `format` types it for sure (`formatTypeOf`); a field
 * several profiles define takes the definition of the main profile, then of a used one, then of the lowest profile
 * id. A choice field (a definition with `options`) gets its labels (`cf_<name>_label`), unless it is multiple (its
 * options and their labels are rows of `account_custom_fields`: it gets no typed column). Any other field, defined or not, is typed from its
 * values in `account_custom_fields`: the first of number, boolean and ISO date (`answer-types.ts`: integers and
 * decimals are numbers) that at least `TYPE_SHARE` (`answer-types.ts`) of its values fit, as the evidence every commit
 * keeps of them says (`type-evidence.ts`).
 */
async function typedFields(
  conn: SqlConnection,
  dialect: WarehouseDialect,
  schema: string,
  stamp: ViewStamp,
): Promise<Map<string, { key: string; type: FieldType }>> {
  const rows = await conn.all<{
    column_name: string;
    source_key: string;
    format: string | null;
    options: string | null;
    multiple: boolean | null;
  }>(
    `SELECT c.column_name, c.source_key, f.format, CAST(f.options AS ${dialect.typeName('text')}) AS options, f.multiple
       FROM ${qualified(schema, '_etl_columns')} c
       LEFT JOIN ${qualified(schema, 'profile_fields')} f ON f.name = c.source_key
       LEFT JOIN ${qualified(schema, 'profiles')} p ON p.profile_id = f.profile_id
      WHERE c.table_name = $1
      ORDER BY c.column_name, CASE WHEN p.main THEN 0 ELSE 1 END, CASE WHEN p.used THEN 0 ELSE 1 END, f.profile_id, f.field_id`,
    [TYPED_TABLE],
  );
  const seen =
    (await readTypeEvidence(conn, dialect, schema, LONG_TABLE, stamp)).get('') ?? new Map<string, AnswerCounts>();
  const out = new Map<string, { key: string; type: FieldType }>();
  const decided = new Set<string>();
  for (const r of rows) {
    if (decided.has(r.column_name)) continue;
    decided.add(r.column_name);
    // a multiple-choice field's text is a list of options: its labels are in account_custom_fields, one row each
    if (r.multiple === true && choiceTypeOf(r.options)) continue;
    const declared = formatTypeOf(r.format);
    if (declared) {
      out.set(r.column_name, { key: r.source_key, type: declared });
      continue;
    }
    // a choice field: its option keys read as their labels
    const choice = choiceTypeOf(r.options);
    if (choice) {
      out.set(r.column_name, { key: r.source_key, type: choice });
      continue;
    }
    const counts = seen.get(r.source_key);
    const kind = counts ? KIND_OF_ANSWER_TYPE.get(answerTypeOf(counts).type) : undefined;
    if (kind) out.set(r.column_name, { key: r.source_key, type: { kind, format: null } });
  }
  return out;
}

/** What a type read from values makes of a field. */
const KIND_OF_ANSWER_TYPE: ReadonlyMap<AnswerType, FieldKind> = new Map([
  ['integer', 'number'],
  ['decimal', 'number'],
  ['boolean', 'boolean'],
  ['date', 'date'],
]);

/** `cf_x` + `_date`, `_number` or `_boolean`; a name taken already gets the hash of the column's name. */
function typedColumnName(column: string, kind: FieldKind, taken: ReadonlySet<string>): string {
  const plain = `${column}_${kind}`;
  return taken.has(plain) ? `${plain}_${keySuffix(column)}` : plain;
}

async function forgetColumn(conn: SqlConnection, schema: string, column: string): Promise<void> {
  await conn.run(`DELETE FROM ${qualified(schema, '_etl_typed_columns')} WHERE table_name = $1 AND column_name = $2`, [
    TYPED_TABLE,
    column,
  ]);
  await conn.run(`DELETE FROM ${qualified(schema, '_etl_typed_values')} WHERE column_name = $1`, [column]);
}

/** The texts of typed fields the span staged that `_etl_typed_values` does not hold yet, read as their types. */
async function parseStagedTexts(
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
async function insertParsed(
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
function typedViewSql(dialect: WarehouseDialect, schema: string, columns: string[], typed: TypedColumn[]): string {
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
