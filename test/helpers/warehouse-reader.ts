import type { DestinationSettings } from '../../src/plan/job-plan.js';
import type { Destination } from '../../src/load/destination.js';
import { openDestination } from '../../src/load/warehouses.js';
import type { SqlConnection } from '../../src/load/warehouse/sql-connection.js';

/** Opens the warehouse of `config` for the length of `fn`. */
export async function withWarehouse<T>(
  config: DestinationSettings,
  fn: (conn: SqlConnection, destination: Destination) => Promise<T>,
): Promise<T> {
  const destination = await openDestination(config);
  try {
    return await destination.withConnection((conn) => fn(conn, destination));
  } finally {
    await destination.close();
  }
}

/** An instant column as ISO UTC with milliseconds, the way the emulator's ground truth writes it. */
export function isoOf(epochMs: number | string | null | undefined): string | null {
  return epochMs === null || epochMs === undefined ? null : new Date(Math.round(Number(epochMs))).toISOString();
}

/** A query's rows with every value as JSON-friendly text or number. */
export function rows<T = Record<string, unknown>>(
  conn: SqlConnection,
  sql: string,
  params: unknown[] = [],
): Promise<T[]> {
  return conn.all<T>(sql, params);
}

/** SQL for an instant column read as epoch milliseconds (same on DuckDB and PostgreSQL). */
export function epochMs(column: string): string {
  return `EXTRACT(EPOCH FROM ${column}) * 1000`;
}

/** `accounts` with `account_custom_fields`, in the shape of the emulator's TruthAccount, keyed by customer. */
export async function readAccounts(conn: SqlConnection): Promise<Map<string, Record<string, unknown>>> {
  const accounts = await conn.all<Record<string, string | number | null>>(
    `SELECT customer_id, phone, email, first_name, last_name, CAST(birthdate AS VARCHAR) AS birthdate, source,
            ${epochMs('profile_set_at')} AS profile_set_at, country, ${epochMs('customer_since')} AS customer_since,
            ${epochMs('member_since')} AS member_since, nationality, gender, city, language
       FROM accounts`,
  );
  const fields = await conn.all<{ customer_id: string; field_name: string; value: string | null }>(
    'SELECT customer_id, field_name, value FROM account_custom_fields ORDER BY customer_id, field_name, position',
  );
  // a multiple-choice field is a row per option: its value, as the ground truth and `accounts` hold it, is their keys
  const multiple = new Set(
    (
      await conn.all<{ name: string }>(
        'SELECT DISTINCT name FROM profile_fields WHERE multiple AND options IS NOT NULL AND name IS NOT NULL',
      )
    ).map((r) => r.name),
  );
  const byCustomer = new Map<string, Record<string, string | null>>();
  for (const f of fields) {
    // no prototype: a field named `__proto__` is a member like any other
    const map = byCustomer.get(f.customer_id) ?? (Object.create(null) as Record<string, string | null>);
    if (!multiple.has(f.field_name)) map[f.field_name] = f.value;
    else if (f.value === null) map[f.field_name] = null;
    else map[f.field_name] = JSON.stringify([...(JSON.parse(map[f.field_name] ?? '[]') as string[]), f.value]);
    byCustomer.set(f.customer_id, map);
  }
  const out = new Map<string, Record<string, unknown>>();
  for (const a of accounts) {
    out.set(String(a.customer_id), {
      ...a,
      profile_set_at: isoOf(a.profile_set_at),
      customer_since: isoOf(a.customer_since),
      member_since: isoOf(a.member_since),
      custom_fields: byCustomer.get(String(a.customer_id)) ?? {},
    });
  }
  return out;
}

/** Checks that every `cf_` column holds what `account_custom_fields` holds under the key `_etl_columns` maps it to. */
export async function pivotMismatches(conn: SqlConnection): Promise<string[]> {
  const map = await conn.all<{ column_name: string; source_key: string }>(
    `SELECT column_name, source_key FROM _etl_columns WHERE table_name = 'accounts'`,
  );
  const wide = await conn.all<Record<string, string | null>>('SELECT * FROM accounts');
  const long = await readAccounts(conn);
  const problems: string[] = [];
  for (const row of wide) {
    const fields = long.get(row.customer_id!)!.custom_fields as Record<string, string | null>;
    for (const { column_name, source_key } of map) {
      const expected = Object.hasOwn(fields, source_key) ? fields[source_key] : null;
      if ((row[column_name] ?? null) !== expected)
        problems.push(`${row.customer_id} ${column_name}: ${row[column_name]} vs ${expected}`);
    }
  }
  return problems;
}

/** Sorts by canonical JSON, so two multisets compare with toEqual. */
export function sortedByJson<T>(items: T[]): T[] {
  return items
    .map((item) => [JSON.stringify(item), item] as const)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([, item]) => item);
}

/** `loyalty_postings` in the shape of the emulator's TruthPosting (decimals as numbers). */
export async function readPostings(conn: SqlConnection): Promise<Array<Record<string, unknown>>> {
  const rows = await conn.all<Record<string, string | number | null>>(
    `SELECT customer_id, ${epochMs('posted_at')} AS posted_at, ${epochMs('txn_at')} AS txn_at, CAST(credit AS VARCHAR) AS credit,
            CAST(credit_value AS VARCHAR) AS credit_value, CAST(debit AS VARCHAR) AS debit, CAST(debit_value AS VARCHAR) AS debit_value,
            CAST(award_on AS VARCHAR) AS award_on, currency, receipt, branch_name, brand_name, country_iso, country, tier_order, tier_name, type, posting_type
       FROM loyalty_postings`,
  );
  const num = (v: string | number | null | undefined) => (v === null || v === undefined ? null : Number(v));
  return rows.map((r) => ({
    ...r,
    posted_at: isoOf(r.posted_at),
    txn_at: isoOf(r.txn_at),
    credit: num(r.credit),
    credit_value: num(r.credit_value),
    debit: num(r.debit),
    debit_value: num(r.debit_value),
    award_on: num(r.award_on),
    tier_order: num(r.tier_order),
    type: num(r.type),
    posting_type: num(r.posting_type),
  }));
}

/** Survey responses rebuilt in the shape of the emulator's TruthSurveyResponse, from the three survey tables. */
export async function readSurveyResponses(conn: SqlConnection): Promise<Array<Record<string, unknown>>> {
  const responses = await conn.all<Record<string, string | number | null>>(
    `SELECT response_id, survey_id, customer_id, ${epochMs('answered_at')} AS answered_at, brand, branch, staff, operator, receipt, tier_name,
            first_name, last_name, phone, email FROM survey_responses`,
  );
  const answers = await conn.all<{ response_id: string; question_code: string; answer: string | null }>(
    'SELECT response_id, question_code, answer FROM survey_answers',
  );
  const questions = await conn.all<{ survey_id: string; question_code: string; question_text: string }>(
    'SELECT survey_id, question_code, question_text FROM survey_questions',
  );
  const answersOf = new Map<string, Record<string, string | null>>();
  for (const a of answers)
    answersOf.set(a.response_id, { ...answersOf.get(a.response_id), [a.question_code]: a.answer });
  const questionsOf = new Map<string, Record<string, string>>();
  for (const q of questions)
    questionsOf.set(q.survey_id, { ...questionsOf.get(q.survey_id), [q.question_text]: q.question_code });
  return responses.map(({ response_id, survey_id, ...r }) => ({
    ...r,
    answered_at: isoOf(r.answered_at),
    questions: questionsOf.get(String(survey_id)) ?? {},
    answers: answersOf.get(String(response_id)) ?? {},
  }));
}

/**
 * The test's own reading of an answer as its view column's type (docs/warehouse.md, "Surveys and their views"), as
 * the text the warehouse casts the value to; null where the answer is no value of the type.
 */
export function readAnswerAs(type: string, answer: string | null): string | null {
  if (answer === null) return null;
  const t = answer.replace(/^ +| +$/g, '');
  switch (type) {
    case 'text':
      return answer;
    case 'integer':
      return /^[+-]?\d{1,9}$/.test(t) ? String(Number(t)) : null;
    case 'decimal':
      return /^[+-]?\d{1,15}(\.\d{1,15})?$/.test(t) ? String(Number(t)) : null;
    case 'boolean':
      return ['true', 'yes', 'y'].includes(t.toLowerCase())
        ? 'true'
        : ['false', 'no', 'n'].includes(t.toLowerCase())
          ? 'false'
          : null;
    case 'date': {
      const m = /^([1-9]\d{3})-(\d{2})-(\d{2})$/.exec(t);
      if (!m) return null;
      const day = new Date(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3])));
      return day.getUTCMonth() === Number(m[2]) - 1 && day.getUTCDate() === Number(m[3]) ? t : null;
    }
    default:
      throw new Error(`unknown answer type ${type}`);
  }
}

/**
 * Where a survey view disagrees with `survey_answers`: each question's column must hold the answer of its own code,
 * read as the column's type (`survey_question_columns`), and `answers_unparsed` must count the answers that are no
 * value of it. Also: `survey_responses` has no column of answers.
 */
export async function surveyPivotMismatches(conn: SqlConnection): Promise<string[]> {
  const problems: string[] = [];
  const wide = await conn.all<{ column_name: string }>(
    `SELECT column_name FROM information_schema.columns WHERE table_catalog = current_database() AND table_name = 'survey_responses' AND column_name LIKE 'q\\_%' ESCAPE '\\'`,
  );
  for (const c of wide) problems.push(`survey_responses has ${c.column_name}`);
  const answers = await conn.all<{ response_id: string; question_code: string; answer: string | null }>(
    'SELECT response_id, question_code, answer FROM survey_answers',
  );
  const byResponse = new Map<string, Map<string, string | null>>();
  for (const a of answers)
    byResponse.set(a.response_id, (byResponse.get(a.response_id) ?? new Map()).set(a.question_code, a.answer));
  const columns = await conn.all<{
    survey_id: string;
    view_name: string;
    question_code: string;
    column_name: string;
    answer_type: string;
    answers_unparsed: number;
  }>(
    'SELECT survey_id, view_name, question_code, column_name, answer_type, answers_unparsed FROM survey_question_columns',
  );
  const views = new Set(columns.map((c) => c.view_name));
  for (const view of views) {
    const mine = columns.filter((c) => c.view_name === view);
    const select = mine
      .map(
        (c) => `CAST("${c.column_name.replaceAll('"', '""')}" AS VARCHAR) AS "${c.column_name.replaceAll('"', '""')}"`,
      )
      .join(', ');
    const rows = await conn.all<Record<string, string | null>>(
      `SELECT response_id${select ? `, ${select}` : ''} FROM "${view}"`,
    );
    const unparsed = new Map(mine.map((c) => [c.column_name, 0]));
    for (const row of rows) {
      const given = byResponse.get(row.response_id!) ?? new Map<string, string | null>();
      for (const c of mine) {
        const answer = given.has(c.question_code) ? given.get(c.question_code)! : null;
        const expected = readAnswerAs(c.answer_type, answer);
        if (answer !== null && expected === null) unparsed.set(c.column_name, unparsed.get(c.column_name)! + 1);
        const held = row[c.column_name] ?? null;
        const same =
          c.answer_type === 'decimal' && held !== null && expected !== null
            ? Number(held) === Number(expected)
            : held === expected;
        if (!same) problems.push(`${view} ${row.response_id} ${c.column_name}: ${held} for ${answer}`);
      }
    }
    for (const c of mine)
      if (Number(c.answers_unparsed) !== unparsed.get(c.column_name))
        problems.push(
          `${view} ${c.column_name}: ${c.answers_unparsed} unparsed counted, ${unparsed.get(c.column_name)} seen`,
        );
  }
  return problems;
}
