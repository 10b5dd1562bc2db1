import { PassThrough } from 'node:stream';
import { beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { runSqlPrompt } from '../../src/commands/sql-prompt.js';
import { DuckDbReader } from '../../src/load/duckdb/duckdb-reader.js';
import { PostgresReader } from '../../src/load/postgres/postgres-reader.js';
import { describeRelations } from '../../src/load/catalog/table-comments.js';
import { duckdbDialect, postgresDialect } from '../../src/load/warehouse/warehouse-dialect.js';
import type { WarehouseReader } from '../../src/load/warehouse/warehouse-reader.js';
import { backfillCommand } from '../../src/commands/backfill.js';
import { CUSTOM_FIELD_POOL, SURVEYS } from '../../src/emulator/index.js';
import type { SqlConnection } from '../../src/load/warehouse/sql-connection.js';
import { surveyIdOf } from '../../src/streams/surveys.js';
import { emulatorJobs, runCli } from '../helpers/cli.js';
import { testDestinations } from '../helpers/destinations.js';
import {
  epochMs,
  isoOf,
  readAnswerAs,
  sortedByJson,
  surveyPivotMismatches,
  withWarehouse,
} from '../helpers/warehouse-reader.js';
import { useEmulator } from '../helpers/suite-emulator.js';

const TZ = 'Europe/Athens';
const START = '2024-03-01';
const MIDDLE = '2024-03-21';
const END = '2024-04-10';

/** A survey's id as the warehouse derives it, from its questions as the emulator serves them. */
function idOf(questions: Record<string, string>): string {
  return surveyIdOf(new Map(Object.entries(questions)));
}

/**
 * The test's own reading of a typed custom field, written from the emulator's documented formats rather than
 * the pipeline's parser: `yyyy-MM-dd` and `dd/MM/yyyy` dates (real calendar days only), `#.##0,00` numbers and
 * `true`/`false` flags. Null: the text is no value of the type.
 */
function oracle(field: string, raw: string): string | number | boolean | null {
  const day = (y: string, m: string, d: string) => {
    const date = new Date(Date.UTC(Number(y), Number(m) - 1, Number(d)));
    return date.getUTCFullYear() === Number(y) &&
      date.getUTCMonth() === Number(m) - 1 &&
      date.getUTCDate() === Number(d)
      ? `${y}-${m}-${d}`
      : null;
  };
  if (field === 'anniversary') {
    const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(raw);
    return m ? day(m[1]!, m[2]!, m[3]!) : null;
  }
  if (field === 'Last visit') {
    const m = /^(\d{2})\/(\d{2})\/(\d{4})$/.exec(raw);
    return m ? day(m[3]!, m[2]!, m[1]!) : null;
  }
  if (field === 'Monthly budget (€)')
    return /^\d{1,3}(\.\d{3})*,\d{2}$/.test(raw) ? Number(raw.replaceAll('.', '').replace(',', '.')) : null;
  if (field === '🎉 party guest') return raw === 'true' ? true : raw === 'false' ? false : null;
  throw new Error(`${field} is not typed`);
}

const TYPED_FIELDS = ['anniversary', 'Last visit', 'Monthly budget (€)', '🎉 party guest'];

describe.each(testDestinations)('the analyst tables of $name: surveys, their views, typed custom fields', (target) => {
  let config: Awaited<ReturnType<typeof target.fresh>>['config'];
  let file: string;
  const emulator = useEmulator({ seed: 31, accounts: 150, startDate: START, endDate: END, timezone: TZ, port: 0 });
  beforeAll(async () => {
    ({ config } = await target.fresh());
    file = emulatorJobs({
      url: emulator.url,
      timezone: TZ,
      firstDay: START,
      destination: config,
      streams: ['accounts', 'surveys'],
      pageSize: 40,
      windowDays: 3,
    });
    // two backfills: the second brings new surveys, questions and custom fields to views made by the first
    await backfillCommand({ config: file, from: START, to: MIDDLE, concurrency: '3' });
    await backfillCommand({ config: file, from: START, to: END, concurrency: '3' });
  }, 180_000);

  it("each survey's view holds that survey's responses, one column per question of it, equal to the answers served", async () => {
    const truth = [...emulator.truth.surveyResponses(START, END)];
    await withWarehouse(config, async (conn) => {
      const surveys = await conn.all<{ survey_id: string; view_name: string }>(
        'SELECT survey_id, view_name FROM surveys',
      );
      const answered = new Set(truth.map((r) => idOf(r.questions)));
      expect(surveys.map((s) => s.survey_id).sort()).toEqual([...answered].sort());
      for (const survey of SURVEYS) {
        const id = idOf(Object.fromEntries(survey.questions.map((q) => [q.text, q.code])));
        const { view_name: view } = surveys.find((s) => s.survey_id === id)!;
        // each column of the view holds one code of this survey, and every code of it has a column
        const columns = await conn.all<{ column_name: string; source_key: string }>(
          'SELECT column_name, source_key FROM _etl_columns WHERE table_name = $1',
          [view],
        );
        expect(columns.map((c) => c.source_key).sort()).toEqual(survey.questions.map((q) => q.code).sort());
        const types = new Map(
          (
            await conn.all<{ column_name: string; answer_type: string }>(
              'SELECT column_name, answer_type FROM survey_question_columns WHERE view_name = $1',
              [view],
            )
          ).map((c) => [c.column_name, c.answer_type]),
        );
        const expected = truth
          .filter((r) => idOf(r.questions) === id)
          .map((r) => ({
            customer_id: r.customer_id,
            answered_at: r.answered_at,
            receipt: r.receipt,
            answers: columns.map((c) => [
              c.source_key,
              readAnswerAs(
                types.get(c.column_name)!,
                Object.hasOwn(r.answers, c.source_key) ? r.answers[c.source_key]! : null,
              ),
            ]),
          }));
        const select = columns
          .map(
            (c) =>
              `CAST("${c.column_name.replaceAll('"', '""')}" AS VARCHAR) AS "${c.column_name.replaceAll('"', '""')}"`,
          )
          .join(', ');
        const held = await conn.all<Record<string, string | number | null>>(
          `SELECT customer_id, ${epochMs('answered_at')} AS answered_at_ms, receipt, ${select} FROM "${view}"`,
        );
        const actual = held.map((row) => ({
          customer_id: row.customer_id,
          answered_at: isoOf(row.answered_at_ms),
          receipt: row.receipt,
          answers: columns.map((c) => [c.source_key, row[c.column_name] ?? null]),
        }));
        expect(actual.length, survey.title).toBeGreaterThan(0);
        expect(sortedByJson(actual), survey.title).toEqual(sortedByJson(expected));
      }
    });
  });

  it("types each question's column from its answers: scales and NPS integers, yes/no booleans, comments text; survey_responses has no answer column", async () => {
    await withWarehouse(config, async (conn) => {
      const held = await conn.all<{
        view_name: string;
        column_name: string;
        answer_type: string;
        answers_unparsed: number;
      }>('SELECT view_name, column_name, answer_type, answers_unparsed FROM survey_question_columns');
      const kinds = {
        rating: 'integer',
        nps: 'integer',
        'yes-no': 'boolean',
        text: 'text',
        day: 'date',
        'day-in-words': 'text',
      } as const;
      const sqlTypes = {
        integer: /^(INTEGER|integer)$/,
        boolean: /^(BOOLEAN|boolean)$/,
        text: /^(VARCHAR|text)$/,
        date: /^(DATE|date)$/,
      } as const;
      for (const survey of SURVEYS) {
        const id = idOf(Object.fromEntries(survey.questions.map((q) => [q.text, q.code])));
        const [{ view_name: view }] = (await conn.all<{ view_name: string }>(
          'SELECT view_name FROM surveys WHERE survey_id = $1',
          [id],
        )) as [{ view_name: string }];
        const declared = new Map(
          (
            await conn.all<{ column_name: string; data_type: string }>(
              'SELECT column_name, data_type FROM information_schema.columns WHERE table_catalog = current_database() AND table_name = $1',
              [view],
            )
          ).map((c) => [c.column_name, c.data_type]),
        );
        const mapped = await conn.all<{ column_name: string; source_key: string }>(
          'SELECT column_name, source_key FROM _etl_columns WHERE table_name = $1',
          [view],
        );
        for (const q of survey.questions) {
          const column = mapped.find((m) => m.source_key === q.code)!.column_name;
          const row = held.find((h) => h.view_name === view && h.column_name === column)!;
          expect(row.answer_type, `${survey.title} ${q.code}`).toBe(kinds[q.kind]);
          expect(Number(row.answers_unparsed)).toBe(0);
          expect(declared.get(column), `${survey.title} ${q.code}`).toMatch(sqlTypes[kinds[q.kind]]);
        }
      }
      expect(await surveyPivotMismatches(conn)).toEqual([]);
    });
  });

  it('keeps Q1 of three surveys in three views, and hostile codes as data', async () => {
    await withWarehouse(config, async (conn) => {
      const q1 = await conn.all<{ table_name: string; column_name: string }>(
        `SELECT c.table_name, c.column_name FROM _etl_columns c JOIN surveys s ON s.view_name = c.table_name WHERE c.source_key = 'Q1' ORDER BY 1`,
      );
      expect(q1).toHaveLength(3);
      expect(q1.every((c) => c.column_name === 'q_q1')).toBe(true);
      expect(new Set(q1.map((c) => c.table_name)).size).toBe(3);
      const kiosk = SURVEYS.find((s) => s.title === 'Kiosk')!;
      const [row] = await conn.all<{ view_name: string; label: string }>(
        'SELECT view_name, label FROM surveys WHERE survey_id = $1',
        [idOf(Object.fromEntries(kiosk.questions.map((q) => [q.text, q.code])))],
      );
      expect(row!.label).toBe(kiosk.questions[0]!.text);
      expect(row!.view_name).toMatch(/^survey_was_the_kiosk_easy_it_s_[0-9a-f]{8}_answers$/);
      const columns = await conn.all<{ column_name: string; source_key: string }>(
        'SELECT column_name, source_key FROM _etl_columns WHERE table_name = $1',
        [row!.view_name],
      );
      expect(columns.map((c) => c.source_key).sort()).toEqual(kiosk.questions.map((q) => q.code).sort());
      for (const c of columns) expect(c.column_name).toMatch(/^q_[a-z0-9_]+$/);
      // the view and table a code's SQL names are still there
      expect(await conn.all(`SELECT COUNT(*) AS n FROM "${row!.view_name}"`)).toHaveLength(1);
    });
  });

  it('the surveys table equals what the answers say: questions, responses, first and last answer, the first question as label', async () => {
    const truth = [...emulator.truth.surveyResponses(START, END)];
    await withWarehouse(config, async (conn) => {
      const held = await conn.all<Record<string, string | number | null>>(
        `SELECT survey_id, label, question_count, responses, ${epochMs('first_answer_at')} AS first_ms, ${epochMs('last_answer_at')} AS last_ms FROM surveys`,
      );
      const expected = SURVEYS.map((survey) => {
        const id = idOf(Object.fromEntries(survey.questions.map((q) => [q.text, q.code])));
        const times = truth
          .filter((r) => idOf(r.questions) === id)
          .map((r) => r.answered_at)
          .sort();
        return {
          survey_id: id,
          label: survey.questions[0]!.text,
          question_count: survey.questions.length,
          responses: times.length,
          first: times[0],
          last: times.at(-1),
        };
      });
      const actual = held.map((r) => ({
        survey_id: r.survey_id,
        label: r.label,
        question_count: Number(r.question_count),
        responses: Number(r.responses),
        first: isoOf(r.first_ms),
        last: isoOf(r.last_ms),
      }));
      expect(sortedByJson(actual)).toEqual(sortedByJson(expected));
    });
  });

  it('accounts_typed offers typed columns equal to the raw texts read by their formats; texts that do not parse are NULL and counted', async () => {
    await withWarehouse(config, async (conn) => {
      const typed = await conn.all<{ source_key: string; column_name: string; typed_column: string; kind: string }>(
        `SELECT source_key, column_name, typed_column, kind FROM _etl_typed_columns WHERE table_name = 'accounts'`,
      );
      const choices = CUSTOM_FIELD_POOL.filter((f) => f.kind === 'choice');
      expect(
        typed
          .filter((t) => t.kind === 'label')
          .map((t) => t.source_key)
          .sort(),
      ).toEqual(choices.map((f) => f.name).sort());
      // a choice's values are its options' labels here (the emulator sends labels): each reads as itself
      for (const t of typed.filter((x) => x.kind === 'label')) {
        const rows = await conn.all<{ raw: string | null; label: string | null }>(
          `SELECT "${t.column_name}" AS raw, "${t.typed_column}" AS label FROM accounts_typed`,
        );
        expect(rows.length).toBeGreaterThan(0);
        for (const r of rows) expect(r.label, t.source_key).toBe(r.raw);
      }
      typed.splice(0, typed.length, ...typed.filter((t) => t.kind !== 'label'));
      expect(typed.map((t) => t.source_key).sort()).toEqual([...TYPED_FIELDS].sort());
      // every column of accounts is in the view, new ones of the second backfill included
      const accountColumns = await columnsOf(conn, 'accounts');
      const viewColumns = await columnsOf(conn, 'accounts_typed');
      expect(viewColumns.filter((c) => !typed.some((t) => t.typed_column === c) && !/_label$/.test(c))).toEqual(
        accountColumns,
      );
      const unparsed = new Map(
        (
          await conn.all<{ source_key: string; rows_unparsed: number | string }>(
            'SELECT source_key, rows_unparsed FROM _etl_unparsed_values',
          )
        ).map((r) => [r.source_key, Number(r.rows_unparsed)]),
      );
      let badSeen = 0;
      for (const t of typed) {
        const rows = await conn.all<{ raw: string | null; typed: string | number | boolean | null }>(
          `SELECT "${t.column_name}" AS raw, CAST("${t.typed_column}" AS VARCHAR) AS typed FROM accounts_typed`,
        );
        let bad = 0;
        for (const { raw, typed: value } of rows) {
          const expected = raw === null ? null : oracle(t.source_key, raw);
          if (raw !== null && expected === null) bad++;
          const actual =
            value === null
              ? null
              : t.kind === 'number'
                ? Number(value)
                : t.kind === 'boolean'
                  ? value === 'true'
                  : String(value);
          expect(actual, `${t.source_key}: ${raw}`).toEqual(expected);
        }
        expect(unparsed.get(t.source_key) ?? 0, t.source_key).toBe(bad);
        badSeen += bad;
      }
      expect(badSeen).toBeGreaterThan(0);
      // text fields stay text only
      const plain = CUSTOM_FIELD_POOL.filter((f) => !TYPED_FIELDS.includes(f.name) && f.kind !== 'choice').map(
        (f) => f.name,
      );
      expect(typed.some((t) => plain.includes(t.source_key))).toBe(false);
    });
  });

  it("the README's query for an analyst runs through loyalty-etl sql: a survey's answers with typed customer fields", async () => {
    if (target.name === 'duckdb') expect((await runCli(['publish', '--config', file])).code).toBe(0);
    const result = await runCli(['sql', '--config', file, '--json', README_QUERY]);
    expect(result.code, result.stderr).toBe(0);
    const rows = JSON.parse(result.stdout) as Array<Record<string, unknown>>;
    expect(rows.length).toBeGreaterThan(0);
    expect(Object.keys(rows[0]!)).toEqual([
      'customer_id',
      'answered_at',
      'satisfied',
      'q_nps',
      'cf_anniversary_date',
      'cf_monthly_budget_number',
    ]);
  }, 180_000);
  it('every table, view and column carries its description, survey views and cf_ columns included, and the sql prompt shows them', async () => {
    await withWarehouse(config, async (conn) => {
      const relations = await describeRelations(
        conn,
        target.name === 'duckdb' ? duckdbDialect : postgresDialect,
        config.schema,
      );
      const missing = relations.flatMap((r) => [
        ...(r.current.table ? [] : [r.name]),
        ...r.columns.filter((c) => !r.current.columns.get(c.name)).map((c) => `${r.name}.${c.name}`),
      ]);
      expect(missing).toEqual([]);
      const [survey] = await conn.all<{ view_name: string }>('SELECT view_name FROM surveys WHERE label = $1', [
        'How satisfied were you with your visit today?',
      ]);
      const view = relations.find((r) => r.name === survey!.view_name)!;
      expect(view.current.table).toMatch(/^Responses to the survey "How satisfied were you with your visit today\?"/);
      expect(view.current.columns.get('q_nps')).toBe(
        'Answer to "How likely are you to recommend us to a friend?" (code "nps"), as integer; NULL where the answer is none (text in survey_answers, counted in survey_question_columns).',
      );
      const accounts = relations.find((r) => r.name === 'accounts')!;
      expect(accounts.current.columns.get('cf_anniversary')).toMatch(/^Custom field "anniversary"/);
    });
    if (target.name === 'duckdb') expect((await runCli(['publish', '--config', file])).code).toBe(0);
    const described = await runCli(['sql', '--config', file, '--json', 'SELECT 1 AS one'], {});
    expect(described.code, described.stderr).toBe(0);
    const reader: WarehouseReader =
      config.type === 'duckdb'
        ? await DuckDbReader.open(config.path.replace(/\.duckdb$/, '.published.duckdb'))
        : await PostgresReader.open(config.url, config.schema);
    const input = new PassThrough();
    const output = new PassThrough();
    let printed = '';
    output.on('data', (d) => (printed += String(d)));
    try {
      const session = runSqlPrompt(reader, { input, output, terminal: false, format: 'csv', maxRows: 1000 });
      input.end('.tables\n.describe accounts\n');
      await session;
    } finally {
      await reader.close();
    }
    expect(printed).toContain('accounts,table,"One row per customer: the latest profile the account export served');
    expect(printed).toMatch(/customer_id,(VARCHAR|text),The customer's id in the service \(customerId\): the key\./);
  });

  it('catalog --format dbt writes dbt sources of every table and column: descriptions, _loaded_at freshness, key tests; markdown and json list the same', async () => {
    const result = await runCli(['catalog', '--config', file, '--format', 'dbt']);
    expect(result.code, result.stderr).toBe(0);
    const doc = parseYaml(result.stdout) as DbtSources;
    // the shape dbt parse accepts: version 2, sources[].tables[].columns[], generic tests under data_tests
    expect(doc.version).toBe(2);
    expect(doc.sources).toHaveLength(1);
    const [source] = doc.sources;
    expect(source!.name).toBe('loyalty');
    expect(source!.schema).toBe(target.name === 'duckdb' ? 'main' : `${config.schema}_analysts`);
    expect(source!.config).toEqual({
      loaded_at_field: '_loaded_at',
      freshness: { warn_after: { count: 30, period: 'hour' }, error_after: { count: 54, period: 'hour' } },
    });
    expect(Object.keys(source!).sort()).toEqual(['config', 'description', 'name', 'schema', 'tables']);
    const tables = await withWarehouse(config, async (conn) =>
      (
        await conn.all<{ table_name: string }>(
          'SELECT table_name FROM information_schema.tables WHERE table_schema = $1',
          [config.schema],
        )
      ).map((t) => t.table_name),
    );
    // the data's tables and views: the pipeline's own _etl_ ones are left out (destination.analysts.pipeline_tables),
    // but the record of the changes of what analysts read, written for them
    expect(source!.tables.map((t) => t.name).sort()).toEqual(
      tables.filter((t) => !t.startsWith('_etl_') || t === '_etl_schema_changes').sort(),
    );
    for (const t of source!.tables) {
      expect(
        Object.keys(t).every((k) => ['name', 'description', 'columns', 'data_tests', 'config'].includes(k)),
        t.name,
      ).toBe(true);
      expect(t.description, t.name).not.toBe('');
      expect(t.columns.length, t.name).toBeGreaterThan(0);
      for (const c of t.columns) {
        expect(
          Object.keys(c).every((k) => ['name', 'description', 'data_type', 'data_tests'].includes(k)),
          `${t.name}.${c.name}`,
        ).toBe(true);
        expect(c.description, `${t.name}.${c.name}`).not.toBe('');
      }
      const loaded = t.columns.some((c) => c.name === '_loaded_at');
      expect(t.config, t.name).toEqual(loaded ? undefined : { freshness: null });
    }
    const table = (name: string) => source!.tables.find((t) => t.name === name)!;
    expect(table('accounts').columns.find((c) => c.name === 'customer_id')!.data_tests).toEqual(['unique', 'not_null']);
    expect(table('survey_answers').columns.find((c) => c.name === 'question_code')!.data_tests).toEqual(['not_null']);
    expect(table('survey_answers').data_tests).toEqual([
      { unique: { column_name: expect.stringContaining('response_id') } },
    ]);
    const [survey] = source!.tables.filter((t) => /^survey_how_satisfied/.test(t.name));
    expect(survey!.columns.find((c) => c.name === 'response_id')!.data_tests).toEqual(['unique', 'not_null']);
    const markdown = await runCli(['catalog', '--config', file, '--format', 'markdown']);
    expect(markdown.code, markdown.stderr).toBe(0);
    for (const t of source!.tables) expect(markdown.stdout).toContain(`## \`${t.name}\``);
    const json = await runCli(['catalog', '--config', file, '--format', 'json']);
    const catalog = JSON.parse(json.stdout) as {
      tables: Array<{ name: string; columns: Array<{ name: string; description: string }> }>;
    };
    expect(catalog.tables.map((t) => t.name)).toEqual(source!.tables.map((t) => t.name));
    expect((await runCli(['catalog', '--config', file, '--format', 'yaml'])).code).toBe(2);
  });
});

interface DbtSources {
  version: number;
  sources: Array<{
    name: string;
    schema: string;
    description: string;
    config: unknown;
    tables: Array<{
      name: string;
      description: string;
      config?: unknown;
      data_tests?: unknown[];
      columns: Array<{ name: string; description: string; data_tests?: unknown[] }>;
    }>;
  }>;
}

/** The query of README.md's "The warehouse" section, on the emulator's "Store visit" survey. */
const README_QUERY = `SELECT r.customer_id, r.answered_at, r.q_q1 AS satisfied, r.q_nps, a.cf_anniversary_date, a.cf_monthly_budget_number
  FROM survey_how_satisfied_were_you_41df2392 r
  JOIN accounts_typed a USING (customer_id)
 ORDER BY r.answered_at DESC
 LIMIT 5`;

async function columnsOf(conn: SqlConnection, table: string): Promise<string[]> {
  const rows = await conn.all<{ column_name: string }>(
    `SELECT column_name FROM information_schema.columns WHERE table_catalog = current_database() AND table_name = $1 ORDER BY ordinal_position`,
    [table],
  );
  return rows.map((r) => r.column_name);
}
