import { pivotColumnName } from '../../transform/column-names.js';
import { qualified, quoteIdent, quoteLiteral } from '../warehouse/identifiers.js';
import type { SqlConnection } from '../warehouse/sql-connection.js';
import type { WarehouseDialect } from '../warehouse/warehouse-dialect.js';
import {
  ANSWER_TYPES,
  answerTypeOf,
  TYPE_SHARE,
  typedAnswer,
  type AnswerCounts,
  type AnswerType,
} from './answer-types.js';
import type { ViewStamp } from './replace-view.js';
import { SCHEMA_CHANGES_TABLE, type SchemaChangeLog } from './schema-contract.js';

/** The table a survey view reads: its name and data columns (the view's first columns, in this order). */
export interface ResponsesTable {
  name: string;
  columns: readonly string[];
}

/** A question's column in a survey's view. */
export interface ViewColumn {
  code: string;
  column: string;
  type: AnswerType;
  answers: number;
  unparsed: number;
  /** The column whose `_etl_columns` row names the code: the question's first column (itself, but for a new type's). */
  codeColumn: string;
}

/** A question's column as the answers alone would type it, before the contract keeps a published type. */
export interface WantedColumn {
  code: string;
  column: string;
  counts: AnswerCounts;
  /** Answers the column had at the commit before (a column with none takes the type of its first answers). */
  answeredBefore: number;
}

/** The warehouse's type word of each answer type, as `readPublishedSchema` spells it. */
const WORD: Readonly<Record<AnswerType, string>> = {
  integer: 'integer',
  decimal: 'double',
  boolean: 'boolean',
  date: 'date',
  text: 'text',
};

function answerTypeOfWord(word: string): AnswerType {
  return (Object.keys(WORD) as AnswerType[]).find((t) => WORD[t] === word) ?? 'text';
}

/** How many of `counts` do not fit `type` (none for text). */
function unfitting(counts: AnswerCounts, type: AnswerType): number {
  return type === 'text' ? 0 : counts.answers - (counts.fits.get(type) ?? 0);
}

/** The columns added to survey views for a new type of a question's answers: view → column → code. */
export async function typeColumns(conn: SqlConnection, schema: string): Promise<Map<string, Map<string, string>>> {
  const out = new Map<string, Map<string, string>>();
  for (const r of await conn.all<{ object_name: string; column_name: string; source_key: string }>(
    `SELECT object_name, column_name, source_key FROM ${qualified(schema, SCHEMA_CHANGES_TABLE)} WHERE change = 'type_column_added'`,
  )) {
    if (!out.has(r.object_name)) out.set(r.object_name, new Map());
    out.get(r.object_name)!.set(r.column_name, r.source_key);
  }
  return out;
}

/**
 * The columns of `view` under the schema contract. A column analysts read keeps its type: answers that no longer fit
 * it are NULL there and said (`SchemaChangeLog.valuesRead`), and under `evolve` get a column of their type beside it,
 * `<column>_<type>`, kept from then on. A text column made before its question had any answer takes the type of its
 * first answers. A new column takes the type its answers give.
 */
export async function contractColumns(
  view: string,
  wanted: readonly WantedColumn[],
  changes: SchemaChangeLog,
  added: ReadonlyMap<string, string> | undefined,
  taken: Set<string>,
): Promise<ViewColumn[]> {
  const out: ViewColumn[] = [];
  for (const w of wanted) {
    const read = answerTypeOf(w.counts);
    const word = changes.publishedType(view, w.column);
    const reason = `question ${JSON.stringify(w.code)}: ${w.counts.answers - read.unparsed} of its ${w.counts.answers} answers read as ${read.type}`;
    const base = { code: w.code, column: w.column, answers: w.counts.answers, codeColumn: w.column };
    if (word === undefined) {
      changes.note(view, w.column, { sourceKey: w.code, reason });
      out.push({ ...base, ...read });
      continue;
    }
    const published = answerTypeOfWord(word);
    if (published === 'text' && w.answeredBefore === 0 && read.type !== 'text') {
      changes.note(view, w.column, { change: 'column_typed', from: 'text', sourceKey: w.code, reason });
      out.push({ ...base, ...read });
      continue;
    }
    out.push({ ...base, type: published, unparsed: unfitting(w.counts, published) });
    // a decimal column whose answers are all whole numbers now still holds them: only a type they no longer fit is news
    const holds = w.counts.answers - unfitting(w.counts, published) >= TYPE_SHARE * w.counts.answers;
    const reads = holds ? published : read.type;
    await changes.valuesRead(view, w.column, word, WORD[reads], {
      sourceKey: w.code,
      reason,
      count: () => Promise.resolve(unfitting(w.counts, published)),
    });
    // the new type's columns of this question, those made before and, under evolve, the one its answers ask for now
    const own = [...(added ?? new Map<string, string>())].filter(([, code]) => code === w.code).map(([c]) => c);
    const types = new Map<string, AnswerType>();
    for (const column of own) {
      const t = changes.publishedType(view, column);
      if (t !== undefined) types.set(column, answerTypeOfWord(t));
    }
    if (changes.contract === 'evolve' && reads !== published && ![...types.values()].includes(reads)) {
      const column = pivotColumnName('', `${w.column}_${read.type}`, taken);
      taken.add(column);
      types.set(column, read.type);
      changes.note(view, column, {
        change: 'type_column_added',
        from: word,
        sourceKey: w.code,
        values: w.counts.answers - unfitting(w.counts, read.type),
        reason: `${reason}: ${w.column} keeps its type ${word}`,
      });
    }
    for (const [column, type] of types)
      out.push({ ...base, column, type, unparsed: unfitting(w.counts, type), codeColumn: w.column });
  }
  return out;
}

/** The answer counts of several surveys' question, added up. */
export function addCounts(list: readonly (AnswerCounts | undefined)[]): AnswerCounts {
  const fits = new Map<Exclude<AnswerType, 'text'>, number>();
  let answers = 0;
  for (const c of list) {
    if (!c) continue;
    answers += c.answers;
    for (const type of ANSWER_TYPES) fits.set(type, (fits.get(type) ?? 0) + (c.fits.get(type) ?? 0));
  }
  return { answers, fits };
}

/**
 * Responses of `surveyIds`, each question's answer joined from `survey_answers` and typed. The code a column holds is
 * read from `_etl_columns` (by the view's and column's names, both made by the loader), so no source text is ever
 * part of a view's SQL.
 */
export function surveyViewSql(
  dialect: WarehouseDialect,
  schema: string,
  responses: ResponsesTable,
  surveyIds: readonly string[],
  view: string,
  columns: readonly ViewColumn[],
): string {
  const base = responses.columns.map((c) => `r.${quoteIdent(c)}`);
  const joinOf = new Map<string, number>();
  for (const c of columns) if (!joinOf.has(c.codeColumn)) joinOf.set(c.codeColumn, joinOf.size);
  const answers = columns.map(
    ({ column, type, codeColumn }) =>
      `${typedAnswer(dialect, type, `a${joinOf.get(codeColumn)!}."answer"`)} AS ${quoteIdent(column)}`,
  );
  const joins = [...joinOf].map(
    ([column, i]) =>
      ` LEFT JOIN ${qualified(schema, 'survey_answers')} a${i} ON a${i}."response_id" = r."response_id" AND a${i}."question_code" = ` +
      `(SELECT c."source_key" FROM ${qualified(schema, '_etl_columns')} c WHERE c."table_name" = ${quoteLiteral(view)} AND c."column_name" = ${quoteLiteral(column)})`,
  );
  const system = ['_window_start', '_run_id', '_loaded_at'].map((c) => `r.${quoteIdent(c)}`);
  const where =
    surveyIds.length === 1
      ? `r."survey_id" = ${quoteLiteral(surveyIds[0]!)}`
      : `r."survey_id" IN (${surveyIds.map(quoteLiteral).join(', ')})`;
  return `SELECT ${[...base, ...answers, ...system].join(', ')} FROM ${qualified(schema, responses.name)} r${joins.join('')} WHERE ${where}`;
}

/** The names a survey view's question columns never take: the responses' columns and the load's. */
export function reserved(responses: ResponsesTable): string[] {
  return [...responses.columns, '_window_start', '_run_id', '_loaded_at'];
}

/** The view's question columns in `_etl_columns`, under the view's name: which code each holds. */
export async function recordViewColumns(
  conn: SqlConnection,
  schema: string,
  view: string,
  columns: readonly ViewColumn[],
  stamp: ViewStamp,
): Promise<void> {
  await conn.run(`DELETE FROM ${qualified(schema, '_etl_columns')} WHERE table_name = $1`, [view]);
  for (const { code, column, codeColumn } of columns) {
    if (codeColumn !== column) continue;
    await conn.run(
      `INSERT INTO ${qualified(schema, '_etl_columns')} (table_name, column_name, source_key, added_at, run_id) VALUES ($1, $2, $3, CAST($4 AS TIMESTAMPTZ), $5)`,
      [view, column, code, stamp.now, stamp.runId],
    );
  }
}
