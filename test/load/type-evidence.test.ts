import { SchemaChangeLog } from '../../src/load/derived/schema-contract.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ANSWER_TYPES, fitsType } from '../../src/load/derived/answer-types.js';
import type { Destination } from '../../src/load/destination.js';
import { openDestination } from '../../src/load/warehouses.js';
import type { SqlConnection } from '../../src/load/warehouse/sql-connection.js';
import { refreshSurveyCatalog } from '../../src/load/derived/survey-catalog.js';
import { refreshTypedFields } from '../../src/load/derived/typed-fields.js';
import { duckdbDialect, postgresDialect, type WarehouseDialect } from '../../src/load/warehouse/warehouse-dialect.js';
import { silentLogger } from '../../src/log/logger.js';
import { loadSpan } from '../../src/pipeline/load-span.js';
import { accountsStream } from '../../src/streams/accounts.js';
import type { StreamContext, StreamDefinition } from '../../src/streams/stream.js';
import { surveyResponsesTable, surveysStream } from '../../src/streams/surveys.js';
import { testDestinations } from '../helpers/destinations.js';
import { offlineApi } from '../helpers/offline-api.js';

const SURVEY_A = {
  'How likely are you to recommend us?': 'nps',
  'When did you visit?': 'visited',
  'Anything else?': 'q1',
};
const SURVEY_B = { 'Did you find it?': 'q1', 'How much did you spend?': 'spent' };

/** One answer record of `questions`, answered by `customer` at `day` `minute`. */
function answer(questions: object, day: string, minute: number, customer: string, answers: object): unknown {
  return {
    questions,
    answers: [
      {
        date: `${day} 10:${String(minute).padStart(2, '0')}:00`,
        customerId: customer,
        questAnsMap: answers,
      },
    ],
  };
}

/** An account export record with its custom fields. */
function account(customer: string, fields: Record<string, unknown> | null, setAt = '2024-03-01T08:00:00Z'): unknown {
  return { customerId: customer, profileSet: setAt, ...(fields ? { customFieldMap: fields } : {}) };
}

/**
 * The evidence as counting the whole tables gives it: the aggregates the typed views were decided by before the
 * evidence was kept (per survey and question through the response; per custom field), written out here on their own.
 */
async function fullCount(conn: SqlConnection, dialect: WarehouseDialect): Promise<string[]> {
  const fits = (value: string) =>
    ANSWER_TYPES.map((type) => `SUM(CASE WHEN ${fitsType(dialect, type, value)} THEN 1 ELSE 0 END) AS f_${type}`).join(
      ', ',
    );
  const answers = await conn.all<Record<string, unknown>>(
    `SELECT 'survey_answers' AS t, r.survey_id AS s, a.question_code AS n, COUNT(*) AS c, ${fits('a.answer')}
       FROM survey_answers a JOIN survey_responses r ON r.response_id = a.response_id
      WHERE a.answer IS NOT NULL GROUP BY r.survey_id, a.question_code`,
  );
  const fields = await conn.all<Record<string, unknown>>(
    `SELECT 'account_custom_fields' AS t, '' AS s, f.field_name AS n, COUNT(*) AS c, ${fits('f.value')}
       FROM account_custom_fields f WHERE f.value IS NOT NULL GROUP BY f.field_name`,
  );
  return [...answers, ...fields].map((r) => Object.values(r).map(String).join('|')).sort();
}

async function kept(conn: SqlConnection): Promise<string[]> {
  const rows = await conn.all<Record<string, unknown>>(
    `SELECT table_name, survey_id, name, value_count, ${ANSWER_TYPES.map((t) => `fit_${t}`).join(', ')} FROM _etl_type_evidence`,
  );
  return rows.map((r) => Object.values(r).map(String).join('|')).sort();
}

/** What the evidence decides: the views' definitions and columns, where each question is and how each field is typed. */
async function decided(conn: SqlConnection): Promise<Record<string, string[]>> {
  const lines = async (sql: string) =>
    (await conn.all<Record<string, unknown>>(sql)).map((r) => Object.values(r).map(String).join('|')).sort();
  return {
    views: await lines(`SELECT view_name, definition FROM _etl_views`),
    columns: await lines(
      `SELECT c.table_name, c.column_name, c.data_type FROM information_schema.columns c JOIN _etl_views v ON v.view_name = c.table_name WHERE c.table_catalog = current_database()`,
    ),
    questions: await lines(
      `SELECT survey_id, question_code, view_name, column_name, answer_type, answers, answers_unparsed FROM survey_question_columns`,
    ),
    typed: await lines(`SELECT column_name, typed_column, source_key, kind, format FROM _etl_typed_columns`),
    values: await lines(`SELECT column_name, raw_value, value FROM _etl_typed_values`),
  };
}

describe.each(testDestinations)('type evidence kept by each commit on $name', (target) => {
  const dialect = target.name === 'duckdb' ? duckdbDialect : postgresDialect;
  let destination: Destination;
  let config: Awaited<ReturnType<typeof target.fresh>>['config'];
  let ctx: StreamContext;
  let runs = 0;

  /** Loads `windows` (each a day and its records) of `stream` as one span: one commit. */
  async function load(
    stream: StreamDefinition,
    windows: Array<[string, unknown[]]>,
    into: Destination = destination,
  ): Promise<void> {
    const inMemory: StreamDefinition = {
      ...stream,
      extract: async function* () {
        for (const [day, records] of windows) yield { windowStart: day, records, restart: false };
      },
    };
    runs += 1;
    await loadSpan(
      inMemory,
      windows.map(([day]) => ({ start: day, end: day })),
      ctx,
      into,
      { job: 'evidence', runId: `r${runs}`, firstDay: '2024-03-01', rejectThreshold: 1 },
      silentLogger,
    );
  }

  /** The evidence kept is the whole tables' count, and counting it whole again decides every view alike. */
  async function expectExact(): Promise<void> {
    await destination.withConnection(async (conn) => {
      const evidence = await kept(conn);
      expect(evidence).toEqual(await fullCount(conn, dialect));
      const before = await decided(conn);
      await conn.transaction(async () => {
        await conn.run('DELETE FROM _etl_type_rules');
        const stamp = { runId: 'recount', now: new Date().toISOString() };
        const columns = surveyResponsesTable.columns.map((c) => c.name);
        const changes = await SchemaChangeLog.begin(conn, config.schema!, 'evolve');
        await refreshSurveyCatalog(
          conn,
          dialect,
          config.schema!,
          { name: 'survey_responses', columns },
          stamp,
          changes,
        );
        // accounts_typed is made by the first commit of accounts
        if ((await conn.all(`SELECT 1 FROM _etl_views WHERE view_name = 'accounts_typed'`)).length > 0)
          await refreshTypedFields(conn, dialect, config.schema!, undefined, stamp, changes);
      });
      expect(await kept(conn)).toEqual(evidence);
      expect(await decided(conn)).toEqual(before);
    });
  }

  beforeAll(async () => {
    ({ config } = await target.fresh());
    destination = await openDestination(config);
    const api = offlineApi();
    ctx = {
      api,
      pageSize: 100,
      concurrency: 1,
      timezone: 'UTC',
      job: 'evidence',
      jobConfig: {
        streams: [],
        window_days: 1,
        lookback_days: 0,
        first_day: '2024-03-01',
        reject_threshold: 1,
        sweep_days: 7,
        postings: { customers: 'all' as const, max_span_days: 1 },
      },
      logger: silentLogger,
    };
  });
  afterAll(async () => destination?.close());

  it('survey answers: inserted, answered again, replaced by another type, and windows loaded again with fewer', async () => {
    const day1 = Array.from({ length: 10 }, (_, i) =>
      answer(SURVEY_A, '2024-03-01', i, `C${i}`, { nps: String(i), visited: `2024-02-0${i + 1}`, q1: `text ${i}` }),
    );
    const day2 = Array.from({ length: 6 }, (_, i) =>
      answer(SURVEY_B, '2024-03-02', i, `C${i}`, { q1: i % 2 ? 'yes' : 'no', spent: `${i}.5` }),
    );
    await load(surveysStream, [
      ['2024-03-01', day1],
      ['2024-03-02', day2],
    ]);
    await expectExact();
    await destination.withConnection(async (conn) => {
      const types = await conn.all<{ question_code: string; answer_type: string }>(
        `SELECT question_code, answer_type FROM survey_question_columns ORDER BY survey_id, question_code`,
      );
      expect(types.map((t) => t.answer_type).sort()).toEqual(['boolean', 'date', 'decimal', 'integer', 'text']);
    });

    // day 1 again: four nps answers are words now (integer no more), one answer record is gone, one is new with a
    // NULL; day 3 is new: survey B's q1 gets words, its spent no answer at all
    const again1 = day1.slice(0, 9).map((_, i) =>
      answer(SURVEY_A, '2024-03-01', i, `C${i}`, {
        nps: i < 4 ? 'N/A' : String(i),
        visited: `2024-02-0${i + 1}`,
        q1: i === 2 ? null : `text ${i}`,
      }),
    );
    again1.push(answer(SURVEY_A, '2024-03-01', 30, 'C30', { nps: '7', visited: null, q1: '12' }));
    const day3 = Array.from({ length: 3 }, (_, i) =>
      answer(SURVEY_B, '2024-03-03', i, `D${i}`, { q1: `maybe ${i}`, spent: null }),
    );
    await load(surveysStream, [
      ['2024-03-01', again1],
      ['2024-03-02', day2],
      ['2024-03-03', day3],
    ]);
    await expectExact();
    await destination.withConnection(async (conn) => {
      const [nps] = await conn.all<{ answer_type: string; answers: unknown }>(
        `SELECT answer_type, answers FROM survey_question_columns WHERE question_code = 'nps'`,
      );
      // the published column keeps its type: the words are NULL there, and have a text column of their own
      expect([nps!.answer_type, Number(nps!.answers)]).toEqual(['integer', 10]);
      const said = await conn.all<{ column_name: string; change: string }>(
        `SELECT column_name, change FROM _etl_schema_changes WHERE source_key = 'nps' AND change <> 'column_added' ORDER BY 1, 2`,
      );
      expect(said.map((c) => `${c.column_name} ${c.change}`)).toContain('q_nps values_no_longer_fit');
      expect(said.map((c) => `${c.column_name} ${c.change}`)).toContain('q_nps_text type_column_added');
    });

    // day 2 again, empty: its answers leave the evidence; day 3 again with numbers
    await load(surveysStream, [
      ['2024-03-02', []],
      ['2024-03-03', day3.map((_, i) => answer(SURVEY_B, '2024-03-03', i, `D${i}`, { q1: String(i), spent: '1' }))],
    ]);
    await expectExact();
  });

  it('custom fields: inserted, changed to another type, removed, set to null, and a later version kept over an earlier one', async () => {
    const fields = (i: number) => ({ score: String(i), visited: `2024-01-0${i + 1}`, member: i % 2 ? 'yes' : 'no' });
    await load(accountsStream, [
      ['2024-03-01', Array.from({ length: 5 }, (_, i) => account(`C${i}`, fields(i)))],
      ['2024-03-02', Array.from({ length: 5 }, (_, i) => account(`C${i + 5}`, fields(i + 5)))],
    ]);
    await expectExact();
    await destination.withConnection(async (conn) => {
      const typed = await conn.all<{ source_key: string }>(`SELECT source_key FROM _etl_typed_columns`);
      expect(typed.map((t) => t.source_key).sort()).toEqual(['member', 'score', 'visited']);
    });

    // later versions: three scores become words (a number no more), two customers lose `visited`, one its fields
    // entirely, one `member` is null; a customer of day 1 served again for day 3
    await load(accountsStream, [
      [
        '2024-03-03',
        [
          account('C0', { score: 'high', visited: '2024-01-01', member: null }, '2024-03-03T08:00:00Z'),
          account('C1', { score: 'low', member: 'yes' }, '2024-03-03T08:00:00Z'),
          account('C5', { score: 'mid', member: 'no' }, '2024-03-03T08:00:00Z'),
          account('C6', null, '2024-03-03T08:00:00Z'),
          account('C10', { score: '10', note: 'new' }, '2024-03-03T08:00:00Z'),
        ],
      ],
    ]);
    await expectExact();
    await destination.withConnection(async (conn) => {
      const typed = await conn.all<{ source_key: string }>(`SELECT source_key FROM _etl_typed_columns`);
      // score's values are words now, but its typed column stays: they are NULL there
      expect(typed.map((t) => t.source_key).sort()).toEqual(['member', 'score', 'visited']);
    });

    // day 1 again with other values: C0 and C1 keep their day-3 versions, the others of day 1 change
    await load(accountsStream, [
      [
        '2024-03-01',
        Array.from({ length: 5 }, (_, i) => account(`C${i}`, { score: String(i * 10), visited: 'never', member: 'y' })),
      ],
    ]);
    await expectExact();
  });

  it('a warehouse made before the evidence was kept has it counted once, at its next commit, to the same views', async () => {
    // a copy that kept its evidence all along, and the warehouse as one made before the evidence was kept
    await destination.close();
    const twin = await openDestination((await target.copy(config)).config);
    destination = await openDestination(config);
    await destination.withConnection(async (conn) => {
      await conn.run('DROP TABLE _etl_type_evidence');
      await conn.run('DROP TABLE _etl_type_rules');
      await conn.run(`DELETE FROM _etl_migrations WHERE version = '012_type_evidence'`);
    });
    await destination.close();
    destination = await openDestination(config);
    await destination.withConnection(async (conn) => {
      expect(await conn.all('SELECT * FROM _etl_type_evidence')).toEqual([]);
    });
    try {
      // the same commits on both: each changes a few rows of one table
      const spans: Array<[StreamDefinition, Array<[string, unknown[]]>]> = [
        [surveysStream, [['2024-03-06', [answer(SURVEY_A, '2024-03-06', 1, 'C1', { nps: '5', q1: 'x' })]]]],
        [
          accountsStream,
          [['2024-03-06', [account('C2', { score: 'x', visited: '2024-01-09' }, '2024-03-06T08:00:00Z')]]],
        ],
        [surveysStream, [['2024-03-06', [answer(SURVEY_B, '2024-03-06', 2, 'C2', { q1: 'yes', spent: '2' })]]]],
        [accountsStream, [['2024-03-07', [account('C3', { member: 'n' }, '2024-03-07T08:00:00Z')]]]],
      ];
      for (const [stream, windows] of spans) {
        await load(stream, windows);
        await load(stream, windows, twin);
        // the evidence of the tables counted so far (each at its first commit since), and every view
        const counted = await destination.withConnection(async (conn) =>
          (await conn.all<{ table_name: string }>('SELECT table_name FROM _etl_type_rules')).map((r) => r.table_name),
        );
        const [mine, theirs] = await Promise.all(
          [destination, twin].map((d) =>
            d.withConnection(async (conn) => [
              (await kept(conn)).filter((line) => counted.includes(line.split('|')[0]!)),
              await decided(conn),
            ]),
          ),
        );
        expect(mine).toEqual(theirs);
      }
      const [mine, theirs] = await Promise.all([destination, twin].map((d) => d.withConnection(kept)));
      expect(mine).toEqual(theirs);
      await expectExact();
    } finally {
      await twin.close();
    }
  });

  it('keeps the rules warehouses hold: a new way of counting the same evidence counts no warehouse again', async () => {
    await load(accountsStream, [['2024-03-20', [account('R1', { tier: 'Gold', since: '2024-01-02' })]]]);
    await load(surveysStream, [['2024-03-20', [answer(SURVEY_B, '2024-03-20', 1, 'R1', { q1: 'yes', spent: '2' })]]]);
    const rules = await destination.withConnection((conn) =>
      conn.all<{ table_name: string; rule: string }>(
        `SELECT table_name, rule FROM _etl_type_rules ORDER BY table_name`,
      ),
    );
    // the rules as warehouses were first given them (row by row), per dialect
    expect(rules).toEqual(
      target.name === 'duckdb'
        ? [
            { table_name: 'account_custom_fields', rule: '215f01a336fab9361ddb8ac0fe435820' },
            { table_name: 'survey_answers', rule: '63453b0e5b35b8fc99a37ad06e6f51db' },
          ]
        : [
            { table_name: 'account_custom_fields', rule: '4d170ca9b0830a3563e522b25da260d8' },
            { table_name: 'survey_answers', rule: 'dc77f0b82dc46567b847e2bc888a944e' },
          ],
    );
  });
});
