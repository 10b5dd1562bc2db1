import { createHash } from 'node:crypto';
import { pivotColumnName, snakeCase } from '../../transform/column-names.js';
import { qualified, quoteIdent } from '../warehouse/identifiers.js';
import type { AnswerCounts } from './answer-types.js';
import { replaceView, type ViewStamp } from './replace-view.js';
import { SchemaChangeLog } from './schema-contract.js';
import {
  contractColumns,
  surveyViewSql,
  typeColumns,
  recordViewColumns,
  reserved,
  type ResponsesTable,
  type ViewColumn,
  type WantedColumn,
} from './survey-columns.js';
import { refreshStableViews } from './survey-series.js';
import { readTypeEvidence } from './type-evidence.js';
import { valuesList } from '../warehouse/values-list.js';
import type { SqlConnection } from '../warehouse/sql-connection.js';
import type { WarehouseDialect } from '../warehouse/warehouse-dialect.js';

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
  const slug = labelSlug(label);
  return `survey_${slug ? `${slug}_` : ''}${snakeCase(surveyId).slice(0, 8)}_answers`;
}

export type { ResponsesTable } from './survey-columns.js';

/**
 * The view of a survey across the versions of its question set: `survey_` + its label's slug + the first 8 hex digits
 * of SHA-256 of the label. The versions of one survey share their first question (its label), so the name never
 * changes as questions are added or dropped.
 */
export function stableViewName(label: string): string {
  const slug = labelSlug(label);
  return `survey_${slug ? `${slug}_` : ''}${createHash('sha256').update(label).digest('hex').slice(0, 8)}`;
}

/** The first whole words of a survey's label in lower snake case, as many as fit in {@link MAX_LABEL} characters. */
function labelSlug(label: string | null): string {
  let slug = '';
  for (const word of snakeCase(label ?? '').split('_')) {
    const longer = slug ? `${slug}_${word}` : word;
    if (longer.length > MAX_LABEL) break;
    slug = longer;
  }
  return slug;
}

/**
 * Rebuilds `surveys` and `survey_question_columns` from `survey_questions`, `survey_responses` and `survey_answers`,
 * and keeps a wide view per survey version (question set) and one per survey across its versions
 * (`survey-series.ts`), inside the commit of a surveys span (after its merge). `survey_responses` has no answer
 * columns: a question code names different questions in different surveys (`Q1` of three), so a survey's view holds
 * that survey's responses and a column for each of its questions alone, named `q_` + the code unique within the
 * survey (mapped back to its code in `_etl_columns` under the view's name) and typed from its answers
 * (`answer-types.ts`) by the evidence each commit keeps of them (`type-evidence.ts`), under the schema contract
 * (`survey-columns.ts`): a published column keeps its type.
 */
export async function refreshSurveyCatalog(
  conn: SqlConnection,
  dialect: WarehouseDialect,
  schema: string,
  responses: ResponsesTable,
  stamp: ViewStamp,
  changes: SchemaChangeLog,
): Promise<void> {
  const questions = await conn.all<QuestionRow>(
    `SELECT survey_id, question_code, question_text, question_order FROM ${qualified(schema, 'survey_questions')} ORDER BY survey_id`,
  );
  const bySurvey = new Map<string, QuestionRow[]>();
  for (const q of questions) bySurvey.set(q.survey_id, [...(bySurvey.get(q.survey_id) ?? []), q]);
  const counts = await readTypeEvidence(conn, dialect, schema, 'survey_answers', stamp);
  const surveys = [...bySurvey].map(([id, list]) => {
    const ordered = list.sort(questionOrder);
    const label = ordered[0]?.question_text ?? null;
    return { id, label, questions: ordered, view: surveyViewName(id, label) };
  });
  // what a new view of a version is, said in its record: the analyst of the old version's view learns where to read
  const versionsOf = new Map<string, number>();
  for (const s of surveys)
    versionsOf.set(stableViewName(s.label ?? s.id), (versionsOf.get(stableViewName(s.label ?? s.id)) ?? 0) + 1);
  for (const s of surveys) {
    const stable = stableViewName(s.label ?? s.id);
    changes.note(s.view, null, {
      reason:
        (versionsOf.get(stable) ?? 0) > 1
          ? `a new version of the survey ${JSON.stringify(s.label ?? '')} (its question set changed): its responses from now on; the survey across its versions is ${stable}`
          : `a new survey ${JSON.stringify(s.label ?? '')}; the survey across its versions is ${stable}`,
    });
    changes.note(stable, null, {
      reason: `the survey ${JSON.stringify(s.label ?? '')} across every version of its question set`,
    });
  }
  const answeredBefore = await previousAnswers(conn, schema);
  const added = await typeColumns(conn, schema);
  await conn.run(`DELETE FROM ${qualified(schema, 'survey_question_columns')}`);
  for (const survey of surveys) {
    const wanted = viewColumns(survey.questions, responses, counts.get(survey.id), answeredBefore.get(survey.id));
    const taken = new Set([...reserved(responses), ...wanted.map((w) => w.column)]);
    const columns = await contractColumns(survey.view, wanted, changes, added.get(survey.view), taken);
    const select = surveyViewSql(dialect, schema, responses, [survey.id], survey.view, columns);
    if (await replaceView(conn, schema, survey.view, select, stamp))
      await recordViewColumns(conn, schema, survey.view, columns, stamp);
    await recordQuestionColumns(conn, schema, survey.id, survey.view, columns, stamp);
  }
  const stable = await refreshStableViews(conn, dialect, schema, responses, stamp, changes, {
    surveys: surveys.map((s) => ({ ...s, view: stableViewName(s.label ?? s.id) })),
    counts,
    answeredBefore,
    added,
  });
  await conn.run(`DELETE FROM ${qualified(schema, 'surveys')}`);
  if (surveys.length === 0) return;
  const list = valuesList(
    surveys.map((s) => [s.id, s.label, s.questions.length, s.view, stable.get(s.id) ?? s.view]),
    ['TEXT', 'TEXT', 'INTEGER', 'TEXT', 'TEXT'],
    3,
  );
  await conn.run(
    `INSERT INTO ${qualified(schema, 'surveys')} (survey_id, label, question_count, responses, first_answer_at, last_answer_at, view_name, stable_view, _run_id, _loaded_at)
     SELECT v.survey_id, v.label, v.question_count, COUNT(r.survey_id), MIN(r.answered_at), MAX(r.answered_at), v.view_name, v.stable_view, $1, CAST($2 AS TIMESTAMPTZ)
       FROM (VALUES ${list.sql}) v (survey_id, label, question_count, view_name, stable_view)
       LEFT JOIN ${qualified(schema, responses.name)} r ON r.survey_id = v.survey_id
      GROUP BY v.survey_id, v.label, v.question_count, v.view_name, v.stable_view`,
    [stamp.runId, stamp.now, ...list.params],
  );
}

/** The answers each survey's question had at the commit before, as `survey_question_columns` counted them. */
async function previousAnswers(conn: SqlConnection, schema: string): Promise<Map<string, Map<string, number>>> {
  const out = new Map<string, Map<string, number>>();
  for (const r of await conn.all<{ survey_id: string; question_code: string; answers: number | bigint }>(
    `SELECT survey_id, question_code, answers FROM ${qualified(schema, 'survey_question_columns')}`,
  )) {
    if (!out.has(r.survey_id)) out.set(r.survey_id, new Map());
    out.get(r.survey_id)!.set(r.question_code, Number(r.answers));
  }
  return out;
}

/** Questions in their survey's order (codes of surveys loaded before the order was kept: by code). */
function questionOrder(a: QuestionRow, b: QuestionRow): number {
  const [x, y] = [a.question_order ?? Number.MAX_SAFE_INTEGER, b.question_order ?? Number.MAX_SAFE_INTEGER];
  return x !== y ? x - y : a.question_code < b.question_code ? -1 : a.question_code > b.question_code ? 1 : 0;
}

/** Each question's column name, unique within the view, in question order, and its answers' counts. */
function viewColumns(
  questions: QuestionRow[],
  responses: ResponsesTable,
  counts: ReadonlyMap<string, AnswerCounts> | undefined,
  before: ReadonlyMap<string, number> | undefined,
): WantedColumn[] {
  const taken = new Set(reserved(responses));
  return questions.map((q) => {
    const column = pivotColumnName(QUESTION_PREFIX, q.question_code, taken);
    taken.add(column);
    const seen = counts?.get(q.question_code) ?? { answers: 0, fits: new Map() };
    return { code: q.question_code, column, counts: seen, answeredBefore: before?.get(q.question_code) ?? 0 };
  });
}

/** The prefix of a question's column in its survey's view. */
export const QUESTION_PREFIX = 'q_';

/** Where each question's answers are: its view, its column there, the column's type and the answers that did not fit it. */
async function recordQuestionColumns(
  conn: SqlConnection,
  schema: string,
  surveyId: string,
  view: string,
  columns: ViewColumn[],
  stamp: ViewStamp,
): Promise<void> {
  const own = columns.filter((c) => c.codeColumn === c.column);
  if (own.length === 0) return;
  const list = valuesList(
    own.map((c) => [surveyId, c.code, view, c.column, c.type, c.answers, c.unparsed]),
    ['TEXT', 'TEXT', 'TEXT', 'TEXT', 'TEXT', 'BIGINT', 'BIGINT'],
    3,
  );
  await conn.run(
    `INSERT INTO ${qualified(schema, 'survey_question_columns')} (survey_id, question_code, view_name, column_name, answer_type, answers, answers_unparsed, _run_id, _loaded_at)
     SELECT v.*, $1, CAST($2 AS TIMESTAMPTZ) FROM (VALUES ${list.sql}) v (survey_id, question_code, view_name, column_name, answer_type, answers, answers_unparsed)`,
    [stamp.runId, stamp.now, ...list.params],
  );
}

/**
 * Moves a warehouse made before `survey_responses` lost its `q_` columns to the new shape, once, after the DDL
 * migrations: the survey views (which read those columns) are dropped, the columns and their `_etl_columns` rows go,
 * and the views are made again from `survey_answers`. A warehouse without such columns is left as it is.
 */
export async function dropSharedQuestionColumns(
  conn: SqlConnection,
  dialect: WarehouseDialect,
  schema: string,
  stamp: ViewStamp,
): Promise<boolean> {
  const table = 'survey_responses';
  const old = await conn.all<{ column_name: string }>(
    `SELECT column_name FROM ${qualified(schema, '_etl_columns')} WHERE table_name = $1`,
    [table],
  );
  if (old.length === 0) return false;
  await conn.transaction(async () => {
    const views = await conn.all<{ view_name: string }>(`SELECT view_name FROM ${qualified(schema, 'surveys')}`);
    for (const { view_name } of views) {
      await conn.run(`DROP VIEW IF EXISTS ${qualified(schema, view_name)} CASCADE`);
      await conn.run(`DELETE FROM ${qualified(schema, '_etl_views')} WHERE view_name = $1`, [view_name]);
    }
    for (const { column_name } of old)
      await conn.run(`ALTER TABLE ${qualified(schema, table)} DROP COLUMN IF EXISTS ${quoteIdent(column_name)}`);
    await conn.run(`DELETE FROM ${qualified(schema, '_etl_columns')} WHERE table_name = $1`, [table]);
    const columns = await conn.all<{ column_name: string }>(
      `SELECT column_name FROM information_schema.columns WHERE table_catalog = current_database() AND table_schema = $1 AND table_name = $2 ORDER BY ordinal_position`,
      [schema, table],
    );
    const data = columns
      .map((c) => c.column_name)
      .filter((c) => !['_window_start', '_run_id', '_loaded_at'].includes(c));
    // the views of the old shape are gone: they are made again as new ones
    const changes = await SchemaChangeLog.begin(conn, schema, 'evolve');
    await refreshSurveyCatalog(conn, dialect, schema, { name: table, columns: data }, stamp, changes);
    await changes.finish(conn, schema, stamp);
  });
  return true;
}
