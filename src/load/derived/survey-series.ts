import { pivotColumnName } from '../../transform/column-names.js';
import { qualified } from '../warehouse/identifiers.js';
import type { SqlConnection } from '../warehouse/sql-connection.js';
import type { WarehouseDialect } from '../warehouse/warehouse-dialect.js';
import type { AnswerCounts } from './answer-types.js';
import { replaceView, type ViewStamp } from './replace-view.js';
import type { SchemaChangeLog } from './schema-contract.js';
import {
  addCounts,
  contractColumns,
  recordViewColumns,
  reserved,
  surveyViewSql,
  type ResponsesTable,
  type WantedColumn,
} from './survey-columns.js';

/** A version of a survey (one question set), with the name of the view of all its versions. */
interface SurveyVersion {
  id: string;
  questions: ReadonlyArray<{ question_code: string }>;
  /** The survey's stable view (`stableViewName`): the versions that share it are one survey. */
  view: string;
}

/**
 * Keeps one view per survey across the versions of its question set, in the commit of a surveys span: the responses
 * of every version, a column per question code any version asked (a question a version dropped is NULL in that
 * version's responses; a new one is a new column), typed from the answers of all versions under the schema contract.
 * A column's name is kept in `_etl_columns` under the view's name once given, so it never changes as versions come.
 * Returns each survey id's stable view.
 */
export async function refreshStableViews(
  conn: SqlConnection,
  dialect: WarehouseDialect,
  schema: string,
  responses: ResponsesTable,
  stamp: ViewStamp,
  changes: SchemaChangeLog,
  known: {
    surveys: readonly SurveyVersion[];
    counts: ReadonlyMap<string, ReadonlyMap<string, AnswerCounts>>;
    answeredBefore: ReadonlyMap<string, ReadonlyMap<string, number>>;
    added: ReadonlyMap<string, ReadonlyMap<string, string>>;
  },
): Promise<Map<string, string>> {
  const byView = new Map<string, SurveyVersion[]>();
  for (const s of known.surveys) byView.set(s.view, [...(byView.get(s.view) ?? []), s]);
  const named = await namedColumns(conn, schema);
  const out = new Map<string, string>();
  for (const [view, versions] of byView) {
    versions.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    for (const v of versions) out.set(v.id, view);
    const wanted = wantedColumns(view, versions, responses, named.get(view), changes, known);
    const taken = new Set([...reserved(responses), ...wanted.map((w) => w.column)]);
    const columns = await contractColumns(view, wanted, changes, known.added.get(view), taken);
    const select = surveyViewSql(
      dialect,
      schema,
      responses,
      versions.map((v) => v.id),
      view,
      columns,
    );
    if (await replaceView(conn, schema, view, select, stamp))
      await recordViewColumns(conn, schema, view, columns, stamp);
  }
  return out;
}

/**
 * The question columns of a stable view: the codes it has named already, in the order the view has them, then each
 * code no version asked before, in its version's order, named `q_` + the code unique within the view.
 */
function wantedColumns(
  view: string,
  versions: readonly SurveyVersion[],
  responses: ResponsesTable,
  named: ReadonlyMap<string, string> | undefined,
  changes: SchemaChangeLog,
  known: {
    counts: ReadonlyMap<string, ReadonlyMap<string, AnswerCounts>>;
    answeredBefore: ReadonlyMap<string, ReadonlyMap<string, number>>;
  },
): WantedColumn[] {
  const published = [...(changes.before.get(view)?.keys() ?? [])];
  const place = (column: string) => {
    const at = published.indexOf(column);
    return at < 0 ? Number.MAX_SAFE_INTEGER : at;
  };
  const codes = new Map<string, string>(
    [...(named ?? new Map<string, string>())].sort(([a], [b]) => place(a) - place(b)).map(([c, code]) => [code, c]),
  );
  const taken = new Set([...reserved(responses), ...codes.values()]);
  for (const v of versions)
    for (const q of v.questions) {
      if (codes.has(q.question_code)) continue;
      const column = pivotColumnName('q_', q.question_code, taken);
      taken.add(column);
      codes.set(q.question_code, column);
    }
  const asked = new Set(versions.flatMap((v) => v.questions.map((q) => q.question_code)));
  return [...codes]
    .filter(([code]) => asked.has(code))
    .map(([code, column]) => ({
      code,
      column,
      counts: addCounts(versions.map((v) => known.counts.get(v.id)?.get(code))),
      answeredBefore: versions.reduce((n, v) => n + (known.answeredBefore.get(v.id)?.get(code) ?? 0), 0),
    }));
}

/** The columns each view has named: view → column → code. */
async function namedColumns(conn: SqlConnection, schema: string): Promise<Map<string, Map<string, string>>> {
  const out = new Map<string, Map<string, string>>();
  for (const r of await conn.all<{ table_name: string; column_name: string; source_key: string }>(
    `SELECT table_name, column_name, source_key FROM ${qualified(schema, '_etl_columns')}`,
  )) {
    if (!out.has(r.table_name)) out.set(r.table_name, new Map());
    out.get(r.table_name)!.set(r.column_name, r.source_key);
  }
  return out;
}
