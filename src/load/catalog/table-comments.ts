import { qualified, quoteIdent } from '../warehouse/identifiers.js';
import type { SqlConnection } from '../warehouse/sql-connection.js';
import { columnDescription, tableDoc } from './warehouse-catalog.js';
import type { WarehouseDialect } from '../warehouse/warehouse-dialect.js';

/** A table or view of the warehouse as described: its comment and its columns' comments, in column order. */
export interface DescribedRelation {
  name: string;
  kind: 'table' | 'view';
  description: string | undefined;
  columns: Array<{ name: string; type: string; description: string | undefined }>;
  /** The columns that identify a row, where the warehouse knows them. */
  key: readonly string[];
}

/**
 * What every table, view and column of the schema should say (`warehouse-catalog.ts` for the fixed ones; the
 * columns made at run time from `_etl_columns`, `_etl_typed_columns` and the survey catalog), beside what it says now.
 */
export async function describeRelations(
  conn: SqlConnection,
  dialect: WarehouseDialect,
  schema: string,
): Promise<Array<DescribedRelation & { current: { table: string | null; columns: Map<string, string | null> } }>> {
  const rows = await conn.all<{
    table_name: string;
    kind: 'table' | 'view' | null;
    column_name: string | null;
    data_type: string | null;
    comment: string | null;
  }>(dialect.commentsQuery, [schema]);
  const dynamic = await runTimeDescriptions(conn, schema, new Set(rows.map((r) => r.table_name)));
  const relations = new Map<
    string,
    DescribedRelation & { current: { table: string | null; columns: Map<string, string | null> } }
  >();
  for (const row of rows.filter((r) => r.column_name === null)) {
    relations.set(row.table_name, {
      name: row.table_name,
      kind: row.kind ?? 'table',
      description: tableDoc(row.table_name)?.description ?? dynamic.tables.get(row.table_name),
      columns: [],
      key:
        tableDoc(row.table_name)?.key ??
        (dynamic.borrows.get(row.table_name) === 'survey_responses' ? ['response_id'] : []),
      current: { table: row.comment, columns: new Map() },
    });
  }
  for (const row of rows) {
    const relation = relations.get(row.table_name);
    if (row.column_name === null || !relation) continue;
    const base = dynamic.borrows.get(row.table_name) ?? row.table_name;
    relation.columns.push({
      name: row.column_name,
      type: row.data_type ?? '',
      description:
        dynamic.columns.get(row.table_name)?.get(row.column_name) ?? columnDescription(base, row.column_name),
    });
    relation.current.columns.set(row.column_name, row.comment);
  }
  return [...relations.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/**
 * Writes `COMMENT ON` every table, view and column of the schema whose comment is not what `describeRelations` says,
 * inside the caller's transaction (if any): at every opening of the warehouse, and after every commit that may add
 * a column or a view. Only what differs is written, so a commit that changes nothing takes no lock. Returns how many
 * comments were written.
 */
export async function commentWarehouse(
  conn: SqlConnection,
  dialect: WarehouseDialect,
  schema: string,
): Promise<number> {
  let written = 0;
  for (const relation of await describeRelations(conn, dialect, schema)) {
    if (!tableDoc(relation.name) && relation.description === undefined) continue; // not a table of ours
    const name = qualified(schema, relation.name);
    if (relation.description !== undefined && relation.description !== relation.current.table) {
      await conn.run(
        `COMMENT ON ${relation.kind === 'view' ? 'VIEW' : 'TABLE'} ${name} IS ${dialect.commentLiteral(relation.description)}`,
      );
      written++;
    }
    for (const column of relation.columns) {
      if (column.description === undefined || column.description === relation.current.columns.get(column.name))
        continue;
      await conn.run(
        `COMMENT ON COLUMN ${name}.${quoteIdent(column.name)} IS ${dialect.commentLiteral(column.description)}`,
      );
      written++;
    }
  }
  return written;
}

/** Descriptions of what runs make: survey views and their columns, `cf_` columns, typed columns. */
async function runTimeDescriptions(
  conn: SqlConnection,
  schema: string,
  present: ReadonlySet<string>,
): Promise<{ tables: Map<string, string>; columns: Map<string, Map<string, string>>; borrows: Map<string, string> }> {
  const tables = new Map<string, string>();
  const columns = new Map<string, Map<string, string>>();
  const borrows = new Map<string, string>();
  const put = (table: string, column: string, text: string) =>
    columns.set(table, (columns.get(table) ?? new Map<string, string>()).set(column, text));
  const has = (table: string) => present.has(table);
  if (has('_etl_columns')) {
    const cf = await conn.all<{ column_name: string; source_key: string }>(
      `SELECT column_name, source_key FROM ${qualified(schema, '_etl_columns')} WHERE table_name = 'accounts'`,
    );
    for (const c of cf) {
      const text = `Custom field ${JSON.stringify(c.source_key)}, as the service sends it (text; a multiple-choice field: its option keys as a JSON array); long form in account_custom_fields.`;
      put('accounts', c.column_name, text);
      put('accounts_typed', c.column_name, text);
    }
  }
  if (has('_etl_typed_columns')) {
    const typed = await conn.all<{ typed_column: string; source_key: string; kind: string; format: string | null }>(
      `SELECT typed_column, source_key, kind, format FROM ${qualified(schema, '_etl_typed_columns')} WHERE table_name = 'accounts'`,
    );
    for (const t of typed)
      put(
        'accounts_typed',
        t.typed_column,
        t.kind === 'label'
          ? `Custom field ${JSON.stringify(t.source_key)}, a choice: the label of its option (profile_fields.options); NULL where its text is no option (counted in _etl_unparsed_values).`
          : `Custom field ${JSON.stringify(t.source_key)} read as a ${t.kind}${t.format ? ` by the format ${JSON.stringify(t.format)}` : ', as its values show'}; NULL where its text is none (counted in _etl_unparsed_values).`,
      );
  }
  if (has('surveys') && has('survey_question_columns') && has('survey_questions')) {
    const surveys = await conn.all<{ survey_id: string; label: string | null; view_name: string }>(
      `SELECT survey_id, label, view_name FROM ${qualified(schema, 'surveys')}`,
    );
    for (const s of surveys) {
      tables.set(
        s.view_name,
        `Responses to the survey ${JSON.stringify(s.label ?? '')} (survey_id ${s.survey_id}): the columns of survey_responses and one typed column per question; see survey_question_columns.`,
      );
      borrows.set(s.view_name, 'survey_responses');
    }
    const questions = await conn.all<{
      view_name: string;
      column_name: string;
      question_code: string;
      question_text: string | null;
      answer_type: string;
    }>(
      `SELECT c.view_name, c.column_name, c.question_code, q.question_text, c.answer_type
         FROM ${qualified(schema, 'survey_question_columns')} c
         LEFT JOIN ${qualified(schema, 'survey_questions')} q ON q.survey_id = c.survey_id AND q.question_code = c.question_code`,
    );
    for (const q of questions)
      put(
        q.view_name,
        q.column_name,
        `Answer to ${JSON.stringify(q.question_text ?? '')} (code ${JSON.stringify(q.question_code)}), as ${q.answer_type}${q.answer_type === 'text' ? '' : '; NULL where the answer is none (text in survey_answers, counted in survey_question_columns)'}.`,
      );
  }
  // the stable survey views and the columns added for a new type of answers (016_schema_changes.sql)
  if (has('_etl_schema_changes') && has('surveys') && has('survey_questions')) {
    const stable = await conn.all<{ stable_view: string; label: string | null; versions: number | bigint }>(
      `SELECT stable_view, MIN(label) AS label, COUNT(*) AS versions FROM ${qualified(schema, 'surveys')} WHERE stable_view IS NOT NULL GROUP BY stable_view`,
    );
    for (const s of stable) {
      tables.set(
        s.stable_view,
        `Responses to the survey ${JSON.stringify(s.label ?? '')} across every version of its question set (${Number(s.versions)} so far; survey_id tells them apart): the columns of survey_responses and one typed column per question any version asked, NULL where a version did not ask it. The view to read: its name and columns never change.`,
      );
      borrows.set(s.stable_view, 'survey_responses');
    }
    const views = new Set(stable.map((s) => s.stable_view));
    const texts = new Map(
      (
        await conn.all<{ question_code: string; question_text: string | null; stable_view: string }>(
          `SELECT q.question_code, MAX(q.question_text) AS question_text, s.stable_view
             FROM ${qualified(schema, 'survey_questions')} q JOIN ${qualified(schema, 'surveys')} s ON s.survey_id = q.survey_id
            GROUP BY s.stable_view, q.question_code`,
        )
      ).map((q) => [`${q.stable_view}\u0000${q.question_code}`, q.question_text ?? ''] as const),
    );
    const named = await conn.all<{ table_name: string; column_name: string; source_key: string }>(
      `SELECT table_name, column_name, source_key FROM ${qualified(schema, '_etl_columns')}`,
    );
    for (const c of named)
      if (views.has(c.table_name))
        put(
          c.table_name,
          c.column_name,
          `Answer to ${JSON.stringify(texts.get(`${c.table_name}\u0000${c.source_key}`) ?? '')} (code ${JSON.stringify(c.source_key)}), typed; NULL where the answer is no value of the column's type (text in survey_answers) or the version did not ask it.`,
        );
    const added = await conn.all<{ object_name: string; column_name: string; source_key: string; to_type: string }>(
      `SELECT object_name, column_name, source_key, to_type FROM ${qualified(schema, '_etl_schema_changes')} WHERE change = 'type_column_added'`,
    );
    for (const a of added)
      put(
        a.object_name,
        a.column_name,
        `Answers to the question of code ${JSON.stringify(a.source_key)} read as ${a.to_type}: added when its answers stopped fitting the type of its first column, which keeps it (see _etl_schema_changes).`,
      );
  }
  return { tables, columns, borrows };
}
