import { createHash } from 'node:crypto';
import { ANSWER_TYPES, fitsType, type AnswerCounts } from './answer-types.js';
import { qualified, quoteIdent, quoteLiteral } from '../warehouse/identifiers.js';
import type { ViewStamp } from './replace-view.js';
import type { SqlConnection } from '../warehouse/sql-connection.js';
import { copiedFromParent, stagedRows, stagingName } from '../staging/staging.js';
import type { TableSpec } from '../table-spec.js';
import type { WarehouseDialect } from '../warehouse/warehouse-dialect.js';

/** The evidence per long table and name, and the rule each table's evidence was counted by (`sql/<dialect>/012_type_evidence.sql`). */
const EVIDENCE_TABLE = '_etl_type_evidence';
const RULES_TABLE = '_etl_type_rules';

/**
 * A long table whose values type a column: survey answers (per survey, read through the response, and question
 * code) and custom fields (per field name). `scope` is the column that partitions its evidence: every row that
 * counts towards the evidence of a `scope` value, in the long table and in `group`'s table, carries that value.
 */
interface EvidenceSource {
  table: 'survey_answers' | 'account_custom_fields';
  name: string;
  value: string;
  scope: string;
  /** The table the survey of a value is read from, joined on `scope`. */
  group?: { table: string; column: string };
}

const SOURCES: readonly EvidenceSource[] = [
  {
    table: 'survey_answers',
    name: 'question_code',
    value: 'answer',
    scope: 'response_id',
    group: { table: 'survey_responses', column: 'survey_id' },
  },
  { table: 'account_custom_fields', name: 'field_name', value: 'value', scope: 'customer_id' },
];

export type EvidenceTable = EvidenceSource['table'];

const COUNT_COLUMNS = ['value_count', ...ANSWER_TYPES.map((type) => `fit_${type}`)];
const q = quoteIdent;

/** The survey a value of `source` counts under (its group's column, or none), and the join that reads it. */
function surveyOf(
  dialect: WarehouseDialect,
  schema: string,
  source: EvidenceSource,
): { survey: string; group: string } {
  if (!source.group) return { survey: `CAST('' AS ${dialect.typeName('text')})`, group: '' };
  return {
    survey: `g.${q(source.group.column)}`,
    group: ` JOIN ${qualified(schema, source.group.table)} g ON g.${q(source.scope)} = l.${q(source.scope)}`,
  };
}

/**
 * `survey_id`, `name` and the counts of `source`'s values, from the whole table or, with `scope`, from the rows of
 * the `scope` values the temp table `scope` holds (column `k`), each count multiplied by `sign`. The one definition
 * of the evidence: the full count and the increments are both this. Each distinct value is tested once, with the
 * number of rows that hold it: values repeat (a field's few options, the same dates), and the patterns cost more
 * than counting them.
 */
function countsSql(
  dialect: WarehouseDialect,
  schema: string,
  source: EvidenceSource,
  scope?: string,
  sign = '',
): string {
  const fits = ANSWER_TYPES.map(
    (type) =>
      `${sign}SUM(CASE WHEN ${fitsType(dialect, type, 'v."_value"')} THEN v."_n" ELSE 0 END) AS ${q(`fit_${type}`)}`,
  );
  const { survey, group } = surveyOf(dialect, schema, source);
  const within = scope ? ` JOIN ${q(scope)} s ON s."k" = l.${q(source.scope)}` : '';
  const value = `l.${q(source.value)}`;
  const values =
    `SELECT ${survey} AS "_survey", l.${q(source.name)} AS "_name", ${value} AS "_value", COUNT(*) AS "_n" ` +
    `FROM ${qualified(schema, source.table)} l${group}${within} WHERE ${value} IS NOT NULL ` +
    `GROUP BY ${source.group ? `${survey}, ` : ''}l.${q(source.name)}, ${value}`;
  return (
    `SELECT ${quoteLiteral(source.table)} AS "table_name", v."_survey" AS "survey_id", v."_name" AS "name", ` +
    `${sign}SUM(v."_n") AS "value_count", ${fits.join(', ')} FROM (${values}) v GROUP BY v."_survey", v."_name"`
  );
}

/**
 * What the evidence of `source` is counted by: a change of the rule (a new pattern of a type) counts it again. The
 * rule is spelled as the row-by-row count that {@link countsSql} equals (how it was first counted), so testing each
 * distinct value once instead counts no warehouse again.
 */
function ruleOf(dialect: WarehouseDialect, source: EvidenceSource): string {
  const value = `l.${q(source.value)}`;
  const fits = ANSWER_TYPES.map(
    (type) => `SUM(CASE WHEN ${fitsType(dialect, type, value)} THEN 1 ELSE 0 END) AS ${q(`fit_${type}`)}`,
  );
  const { survey, group } = surveyOf(dialect, 'schema', source);
  const rowByRow =
    `SELECT ${quoteLiteral(source.table)} AS "table_name", ${survey} AS "survey_id", l.${q(source.name)} AS "name", ` +
    `COUNT(*) AS "value_count", ${fits.join(', ')} FROM ${qualified('schema', source.table)} l${group}` +
    ` WHERE ${value} IS NOT NULL GROUP BY ${source.group ? `${survey}, ` : ''}l.${q(source.name)}`;
  return createHash('sha256').update(rowByRow).digest('hex').slice(0, 32);
}

/** Whether `_etl_type_rules` says the evidence of `source` was counted by today's rule. */
async function isCurrent(
  conn: SqlConnection,
  dialect: WarehouseDialect,
  schema: string,
  source: EvidenceSource,
): Promise<boolean> {
  const [row] = await conn.all<{ rule: string }>(
    `SELECT rule FROM ${qualified(schema, RULES_TABLE)} WHERE table_name = $1`,
    [source.table],
  );
  return row?.rule === ruleOf(dialect, source);
}

/**
 * Counts the evidence of `table` again from the whole table, and records the rule it was counted by: what a
 * warehouse made before the evidence was kept gets once, and what `loyalty-etl` does when the rule changed. The
 * commits of every stream take turns (DuckDB's commit lock; on PostgreSQL the analysts' lock, which every commit
 * takes first), so no increment of another commit can fall between the count and its use.
 */
export async function countTypeEvidence(
  conn: SqlConnection,
  dialect: WarehouseDialect,
  schema: string,
  table: EvidenceTable,
  stamp: ViewStamp,
): Promise<void> {
  const source = sourceOf(table);
  await conn.run(`DELETE FROM ${qualified(schema, EVIDENCE_TABLE)} WHERE table_name = $1`, [table]);
  await conn.run(
    `INSERT INTO ${qualified(schema, EVIDENCE_TABLE)} ("table_name", "survey_id", "name", ${COUNT_COLUMNS.map(q).join(', ')}) ${countsSql(dialect, schema, source)}`,
  );
  await conn.run(`DELETE FROM ${qualified(schema, RULES_TABLE)} WHERE table_name = $1`, [table]);
  await conn.run(
    `INSERT INTO ${qualified(schema, RULES_TABLE)} (table_name, rule, updated_at, run_id) VALUES ($1, $2, CAST($3 AS TIMESTAMPTZ), $4)`,
    [table, ruleOf(dialect, source), stamp.now, stamp.runId],
  );
}

/**
 * The evidence of `table`: per survey (`''` for custom fields) and name, how many values there are and how many
 * fit each type. Counted whole first when it is not counted by today's rule. Inside the caller's transaction.
 */
export async function readTypeEvidence(
  conn: SqlConnection,
  dialect: WarehouseDialect,
  schema: string,
  table: EvidenceTable,
  stamp: ViewStamp,
): Promise<Map<string, Map<string, AnswerCounts>>> {
  if (!(await isCurrent(conn, dialect, schema, sourceOf(table))))
    await countTypeEvidence(conn, dialect, schema, table, stamp);
  const rows = await conn.all<Record<string, string | number | bigint>>(
    `SELECT survey_id, name, ${COUNT_COLUMNS.map(q).join(', ')} FROM ${qualified(schema, EVIDENCE_TABLE)} WHERE table_name = $1`,
    [table],
  );
  const out = new Map<string, Map<string, AnswerCounts>>();
  for (const row of rows) {
    const survey = String(row.survey_id);
    if (!out.has(survey)) out.set(survey, new Map());
    out.get(survey)!.set(String(row.name), {
      answers: Number(row.value_count),
      fits: new Map(ANSWER_TYPES.map((type) => [type, Number(row[`fit_${type}`])])),
    });
  }
  return out;
}

/** The evidence of a span's commit, begun before its merge: {@link TypeEvidenceUpdate.finish} after it. */
export interface TypeEvidenceUpdate {
  finish(stamp: ViewStamp): Promise<void>;
}

/**
 * Keeps `_etl_type_evidence` in step with a span's merge, inside its transaction. Before the merge, the evidence
 * of every `scope` value whose rows the merge may change (the keys the span staged, and for a table whose windows
 * are replaced, the keys those windows hold) is counted from the rows as they are and subtracted; after it, the
 * same values are counted again and added. Rows of other values do not change, so the result is what counting the
 * whole table would give, at a cost in proportion to the span. A table whose evidence is not counted by today's
 * rule is counted whole after the merge instead.
 */
export async function beginTypeEvidence(
  conn: SqlConnection,
  dialect: WarehouseDialect,
  schema: string,
  span: { tables: readonly TableSpec[]; spanStart: string; spanEnd: string },
): Promise<TypeEvidenceUpdate> {
  const names = new Set(span.tables.map((t) => t.name));
  const followed: EvidenceSource[] = [];
  const stale: EvidenceSource[] = [];
  for (const source of SOURCES) {
    if (!names.has(source.table)) continue;
    if (source.group && !names.has(source.group.table))
      throw new Error(`type evidence of ${source.table}: ${source.group.table} must be merged in the same commit`);
    ((await isCurrent(conn, dialect, schema, source)) ? followed : stale).push(source);
  }
  const delta = q('_ev_delta');
  if (followed.length > 0) {
    await conn.run(`DROP TABLE IF EXISTS ${delta}`);
    const text = dialect.typeName('text');
    await conn.run(
      `CREATE TEMP TABLE ${delta} ("table_name" ${text}, "survey_id" ${text}, "name" ${text}, ${COUNT_COLUMNS.map((c) => `${q(c)} BIGINT`).join(', ')})${dialect.tempTableSuffix}`,
    );
  }
  for (const source of followed) {
    const scope = scopeName(source);
    const keys = changedKeys(dialect, schema, source, span);
    await conn.run(`DROP TABLE IF EXISTS ${q(scope)}`);
    await conn.run(`CREATE TEMP TABLE ${q(scope)} AS SELECT DISTINCT "k" FROM (${keys.join(' UNION ALL ')}) u`);
    await conn.run(`INSERT INTO ${delta} ${countsSql(dialect, schema, source, scope, '-')}`);
  }
  return {
    async finish(stamp) {
      for (const source of followed)
        await conn.run(`INSERT INTO ${delta} ${countsSql(dialect, schema, source, scopeName(source))}`);
      if (followed.length > 0) {
        await applyDelta(conn, schema);
        for (const source of followed) await conn.run(`DROP TABLE ${q(scopeName(source))}`);
        await conn.run(`DROP TABLE ${delta}`);
      }
      for (const source of stale) await countTypeEvidence(conn, dialect, schema, source.table, stamp);
    },
  };
}

/** The temp table of the `scope` values a span's merge may change in `source`. */
function scopeName(source: EvidenceSource): string {
  return `_ev_scope_${source.table}`;
}

/**
 * Every `scope` value (as `k`) whose rows of `source`'s tables the merge may delete, replace or insert: following
 * each table's merge rule (`merge-statements.ts`).
 */
function changedKeys(
  dialect: WarehouseDialect,
  schema: string,
  source: EvidenceSource,
  span: { tables: readonly TableSpec[]; spanStart: string; spanEnd: string },
): string[] {
  const out: string[] = [];
  for (const name of [source.table, ...(source.group ? [source.group.table] : [])]) {
    const spec = span.tables.find((t) => t.name === name)!;
    out.push(`SELECT ${q(source.scope)} AS "k" FROM ${stagedKeys(dialect, spec, source.scope, span.tables)} st`);
    const merge = spec.merge;
    switch (merge.kind) {
      case 'upsert':
      case 'latest-wins':
        // only staged keys are replaced
        break;
      case 'replace-window':
        out.push(
          `SELECT ${q(source.scope)} AS "k" FROM ${qualified(schema, name)} WHERE "_window_start" BETWEEN CAST(${quoteLiteral(span.spanStart)} AS DATE) AND CAST(${quoteLiteral(span.spanEnd)} AS DATE)`,
        );
        break;
      case 'children': {
        // a staged parent replaces all of its children, also when it stages none
        const parent = span.tables.find((t) => t.name === merge.parent);
        const at = merge.parentKey.indexOf(source.scope);
        if (!parent || at < 0)
          throw new Error(`type evidence of ${name}: its parent ${merge.parent} is not keyed by ${source.scope}`);
        out.push(
          `SELECT ${q(parent.key[at]!)} AS "k" FROM ${stagedKeys(dialect, parent, parent.key[at]!, span.tables)} st`,
        );
        break;
      }
      default:
        throw new Error(`type evidence of ${name}: rows merged by ${merge.kind} are not followed`);
    }
  }
  return [...new Set(out)];
}

/**
 * Staged rows of `spec` to read `column` from: a table staged inside another's rows carries that table's value of
 * every column but an entry's name and value, so the other's staging table is read as it is, its JSON not parsed.
 */
function stagedKeys(dialect: WarehouseDialect, spec: TableSpec, column: string, tables: readonly TableSpec[]): string {
  const own = spec.stagedWith;
  const parent = own && tables.find((t) => t.name === own.table);
  if (own && parent && copiedFromParent(own, spec, parent, column)) return q(stagingName(own.table));
  return stagedRows(dialect, spec, tables);
}

/**
 * Adds the temp table `_ev_delta` to the evidence: the rows of every name it touches are summed with it and written
 * again, those left with no value removed. A count below zero, or more fits than values, means the evidence was not
 * what the rows say: the commit fails rather than type a column by it.
 */
async function applyDelta(conn: SqlConnection, schema: string): Promise<void> {
  const evidence = qualified(schema, EVIDENCE_TABLE);
  const keys = ['table_name', 'survey_id', 'name'];
  const match = (a: string, b: string) => keys.map((k) => `${a}.${q(k)} = ${b}.${q(k)}`).join(' AND ');
  const all = [...keys, ...COUNT_COLUMNS].map(q).join(', ');
  await conn.run(`DROP TABLE IF EXISTS "_ev_sum"`);
  await conn.run(
    `CREATE TEMP TABLE "_ev_sum" AS SELECT ${keys.map(q).join(', ')}, ${COUNT_COLUMNS.map((c) => `SUM(${q(c)}) AS ${q(c)}`).join(', ')}
       FROM (SELECT ${keys.map((k) => `e.${q(k)}`).join(', ')}, ${COUNT_COLUMNS.map((c) => `e.${q(c)}`).join(', ')} FROM ${evidence} e
              WHERE EXISTS (SELECT 1 FROM "_ev_delta" d WHERE ${match('d', 'e')})
             UNION ALL SELECT ${all} FROM "_ev_delta") x
      GROUP BY ${keys.map(q).join(', ')}`,
  );
  const wrong = await conn.all<{ table_name: string; survey_id: string; name: string }>(
    `SELECT table_name, survey_id, name FROM "_ev_sum" WHERE value_count < 0 OR ${ANSWER_TYPES.map((t) => `${q(`fit_${t}`)} < 0 OR ${q(`fit_${t}`)} > value_count`).join(' OR ')} LIMIT 1`,
  );
  if (wrong[0])
    throw new Error(
      `${EVIDENCE_TABLE} does not match ${wrong[0].table_name} (${JSON.stringify(wrong[0].survey_id)}, ${JSON.stringify(wrong[0].name)}): ` +
        `delete its row of ${RULES_TABLE} to count it again`,
    );
  await conn.run(`DELETE FROM ${evidence} WHERE EXISTS (SELECT 1 FROM "_ev_delta" d WHERE ${match('d', evidence)})`);
  await conn.run(`INSERT INTO ${evidence} (${all}) SELECT ${all} FROM "_ev_sum" WHERE value_count <> 0`);
  await conn.run(`DROP TABLE "_ev_sum"`);
}

function sourceOf(table: EvidenceTable): EvidenceSource {
  return SOURCES.find((s) => s.table === table)!;
}
