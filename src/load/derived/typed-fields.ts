import { keySuffix } from '../../transform/column-names.js';
import { choiceTypeOf, formatTypeOf, type FieldKind, type FieldType } from '../../transform/typed-values.js';
import { answerTypeOf, type AnswerCounts, type AnswerType } from './answer-types.js';
import { qualified } from '../warehouse/identifiers.js';
import { replaceView, type ViewStamp } from './replace-view.js';
import type { SchemaChangeLog } from './schema-contract.js';
import { insertParsed, parseStagedTexts, TYPE_OF_KIND, typedViewSql, type TypedColumn } from './typed-field-values.js';
import type { SqlConnection } from '../warehouse/sql-connection.js';
import type { TableSpec } from '../table-spec.js';
import { readTypeEvidence } from './type-evidence.js';
import type { WarehouseDialect } from '../warehouse/warehouse-dialect.js';

/**
 * The table whose `cf_` columns are typed, its long form (`field_name`, `value`), and the view that offers them
 * typed. Named here because a commit of `profile_fields` alone types them too.
 */
export const TYPED_TABLE = 'accounts';
const LONG_TABLE = 'account_custom_fields';
export const TYPED_VIEW = 'accounts_typed';

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
  changes: SchemaChangeLog,
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
  // a published typed column keeps its name and type: values its field no longer fits are NULL there and said
  const drifted: Array<{ column: TypedColumn; reads: string; why: string }> = [];
  for (const [column, { key, type, why }] of wanted) {
    const before = current.get(column);
    if (before && before.kind !== type.kind) {
      typed.push(before);
      drifted.push({ column: before, reads: TYPE_OF_KIND[type.kind], why });
      continue;
    }
    if (before) drifted.push({ column: before, reads: TYPE_OF_KIND[before.kind], why });
    if (before && (before.format ?? null) === type.format) {
      typed.push(before);
      continue;
    }
    const typedColumn = before ? before.typed_column : typedColumnName(column, type.kind, taken);
    taken.add(typedColumn);
    const entry: TypedColumn = {
      column_name: column,
      typed_column: typedColumn,
      source_key: key,
      kind: type.kind,
      format: type.format,
    };
    changes.note(TYPED_VIEW, typedColumn, { sourceKey: key, reason: `custom field ${JSON.stringify(key)}: ${why}` });
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
  for (const [column, before] of current)
    if (!wanted.has(column)) {
      typed.push(before);
      drifted.push({ column: before, reads: 'text', why: 'too few of its values fit any type: it is text' });
    }
  if (staged) await parseStagedTexts(conn, dialect, schema, staged.accounts, typed);
  for (const { column, reads, why } of drifted)
    await changes.valuesRead(TYPED_VIEW, column.typed_column, TYPE_OF_KIND[column.kind], reads, {
      sourceKey: column.source_key,
      reason: `custom field ${JSON.stringify(column.source_key)}: ${why}; its text is in ${column.column_name}`,
      count: () => unparsedRows(conn, schema, column.column_name),
    });
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
): Promise<Map<string, { key: string; type: FieldType; why: string }>> {
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
  const out = new Map<string, { key: string; type: FieldType; why: string }>();
  const decided = new Set<string>();
  for (const r of rows) {
    if (decided.has(r.column_name)) continue;
    decided.add(r.column_name);
    // a multiple-choice field's text is a list of options: its labels are in account_custom_fields, one row each
    if (r.multiple === true && choiceTypeOf(r.options)) continue;
    const declared = formatTypeOf(r.format);
    if (declared) {
      out.set(r.column_name, {
        key: r.source_key,
        type: declared,
        why: `its format ${r.format} reads it as ${declared.kind}`,
      });
      continue;
    }
    // a choice field: its option keys read as their labels
    const choice = choiceTypeOf(r.options);
    if (choice) {
      out.set(r.column_name, { key: r.source_key, type: choice, why: "a choice field, read as its options' labels" });
      continue;
    }
    const counts = seen.get(r.source_key);
    const read = counts ? answerTypeOf(counts) : undefined;
    const kind = read && KIND_OF_ANSWER_TYPE.get(read.type);
    if (kind)
      out.set(r.column_name, {
        key: r.source_key,
        type: { kind, format: null },
        why: `${counts!.answers - read.unparsed} of its ${counts!.answers} values read as ${read.type}`,
      });
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

/** The accounts whose text of `column` is no value of its typed column's type (NULL there). */
async function unparsedRows(conn: SqlConnection, schema: string, column: string): Promise<number> {
  const [row] = await conn.all<{ n: number | bigint | string | null }>(
    `SELECT SUM(rows_unparsed) AS n FROM ${qualified(schema, '_etl_unparsed_values')} WHERE column_name = $1`,
    [column],
  );
  return Number(row?.n ?? 0);
}
