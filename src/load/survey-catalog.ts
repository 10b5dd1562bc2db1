import { pivotColumnName, snakeCase } from '../transform/column-names.js';
import { qualified, quoteIdent, quoteLiteral } from './identifiers.js';
import { replaceView, type ViewStamp } from './replace-view.js';
import { valuesList } from './values-list.js';
import type { SqlConnection } from './sql-connection.js';
import type { TableSpec } from './table-spec.js';
import type { WarehouseDialect } from './warehouse-dialect.js';

/** A question of a survey, as `survey_questions` holds it. */
interface QuestionRow {
  survey_id: string;
  question_code: string;
  question_text: string;
  question_order: number | null;
}

/** Longest part of a view's name taken from its survey's label: keeps names well under PostgreSQL's 63 bytes. */
const MAX_LABEL = 24;

/**
 * The view of one survey: `survey_` + its label in lower snake case (its first words, up to 24 characters; none
 * when it has no ASCII letters or digits) + the first 8 characters of its id + `_answers`. The id makes it unique and stable, whatever
 * other surveys come; the label makes it readable.
 *
 * @example
 * surveyViewName('3f2a9c1b…', 'How satisfied were you with your visit today?') // 'survey_how_satisfied_were_you_3f2a9c1b_answers'
 */
export function surveyViewName(surveyId: string, label: string | null): string {
  // whole words of the label, as many as fit
  let slug = '';
  for (const word of snakeCase(label ?? '').split('_')) {
    const longer = slug ? `${slug}_${word}` : word;
    if (longer.length > MAX_LABEL) break;
    slug = longer;
  }
  return `survey_${slug ? `${slug}_` : ''}${snakeCase(surveyId).slice(0, 8)}_answers`;
}

/**
 * Rebuilds `surveys` from `survey_questions` and `survey_responses`, and keeps a wide view per survey, inside the
 * commit of a surveys span (after its merge). A `q_` column of `survey_responses` is named by question code across
 * surveys, so one column can hold the answers of different questions (`Q1` of two surveys); a survey's view holds
 * that survey's responses and a column for each of its questions alone, named `q_` + the code unique within the
 * survey, mapped back to its code in `_etl_columns` under the view's name.
 */
export async function refreshSurveyCatalog(
  conn: SqlConnection,
  dialect: WarehouseDialect,
  schema: string,
  responses: TableSpec,
  stamp: ViewStamp,
): Promise<void> {
  const questions = await conn.all<QuestionRow>(
    `SELECT survey_id, question_code, question_text, question_order FROM ${qualified(schema, 'survey_questions')} ORDER BY survey_id`,
  );
  const bySurvey = new Map<string, QuestionRow[]>();
  for (const q of questions) bySurvey.set(q.survey_id, [...(bySurvey.get(q.survey_id) ?? []), q]);
  const pivot = await conn.all<{ column_name: string; source_key: string }>(
    `SELECT column_name, source_key FROM ${qualified(schema, '_etl_columns')} WHERE table_name = $1`,
    [responses.name],
  );
  const columnOf = new Map(pivot.map((p) => [p.source_key, p.column_name]));
  const surveys = [...bySurvey].map(([id, list]) => {
    const ordered = list.sort(questionOrder);
    const label = ordered[0]?.question_text ?? null;
    return { id, label, questions: ordered, view: surveyViewName(id, label) };
  });
  for (const survey of surveys) {
    const columns = viewColumns(survey.questions, responses);
    const select = surveyViewSql(dialect, schema, responses, survey.id, columns, columnOf);
    if (await replaceView(conn, schema, survey.view, select, stamp)) await recordViewColumns(conn, schema, survey.view, columns, stamp);
  }
  await conn.run(`DELETE FROM ${qualified(schema, 'surveys')}`);
  if (surveys.length === 0) return;
  const list = valuesList(
    surveys.map((s) => [s.id, s.label, s.questions.length, s.view]),
    ['TEXT', 'TEXT', 'INTEGER', 'TEXT'],
    3,
  );
  await conn.run(
    `INSERT INTO ${qualified(schema, 'surveys')} (survey_id, label, question_count, responses, first_answer_at, last_answer_at, view_name, _run_id, _loaded_at)
     SELECT v.survey_id, v.label, v.question_count, COUNT(r.survey_id), MIN(r.answered_at), MAX(r.answered_at), v.view_name, $1, CAST($2 AS TIMESTAMPTZ)
       FROM (VALUES ${list.sql}) v (survey_id, label, question_count, view_name)
       LEFT JOIN ${qualified(schema, responses.name)} r ON r.survey_id = v.survey_id
      GROUP BY v.survey_id, v.label, v.question_count, v.view_name`,
    [stamp.runId, stamp.now, ...list.params],
  );
}

/** A question's column in its survey's view. */
interface ViewColumn {
  code: string;
  column: string;
}

/** Questions in their survey's order (codes of surveys loaded before the order was kept: by code). */
function questionOrder(a: QuestionRow, b: QuestionRow): number {
  const [x, y] = [a.question_order ?? Number.MAX_SAFE_INTEGER, b.question_order ?? Number.MAX_SAFE_INTEGER];
  return x !== y ? x - y : a.question_code < b.question_code ? -1 : a.question_code > b.question_code ? 1 : 0;
}

/** Each question's column name, unique within the view, in question order. */
function viewColumns(questions: QuestionRow[], responses: TableSpec): ViewColumn[] {
  const taken = new Set([...responses.columns.map((c) => c.name), '_window_start', '_run_id', '_loaded_at']);
  return questions.map((q) => {
    const column = pivotColumnName(responses.pivot!.prefix, q.question_code, taken);
    taken.add(column);
    return { code: q.question_code, column };
  });
}

function surveyViewSql(
  dialect: WarehouseDialect,
  schema: string,
  responses: TableSpec,
  surveyId: string,
  columns: ViewColumn[],
  columnOf: ReadonlyMap<string, string>,
): string {
  const base = responses.columns.map((c) => `r.${quoteIdent(c.name)}`);
  // a question nobody answered yet has no column in survey_responses: its view column is NULL until one does
  const answers = columns.map(({ code, column }) => {
    const source = columnOf.get(code);
    return `${source ? `r.${quoteIdent(source)}` : `CAST(NULL AS ${dialect.typeName('text')})`} AS ${quoteIdent(column)}`;
  });
  const system = ['_window_start', '_run_id', '_loaded_at'].map((c) => `r.${quoteIdent(c)}`);
  return `SELECT ${[...base, ...answers, ...system].join(', ')} FROM ${qualified(schema, responses.name)} r WHERE r."survey_id" = ${quoteLiteral(surveyId)}`;
}

/** The view's question columns in `_etl_columns`, under the view's name: which code each holds. */
async function recordViewColumns(conn: SqlConnection, schema: string, view: string, columns: ViewColumn[], stamp: ViewStamp): Promise<void> {
  await conn.run(`DELETE FROM ${qualified(schema, '_etl_columns')} WHERE table_name = $1`, [view]);
  for (const { code, column } of columns) {
    await conn.run(
      `INSERT INTO ${qualified(schema, '_etl_columns')} (table_name, column_name, source_key, added_at, run_id) VALUES ($1, $2, $3, CAST($4 AS TIMESTAMPTZ), $5)`,
      [view, column, code, stamp.now, stamp.runId],
    );
  }
}
