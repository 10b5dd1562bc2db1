import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Destination } from '../../src/load/destination.js';
import { openDestination } from '../../src/load/warehouses.js';
import type { StreamContext } from '../../src/streams/stream.js';
import { surveysStream } from '../../src/streams/surveys.js';
import { testDestinations } from '../helpers/destinations.js';
import { surveyPivotMismatches } from '../helpers/warehouse-reader.js';
import { loadRecords, offlineContext } from '../helpers/offline-api.js';

const WINDOW = { start: '2024-03-01', end: '2024-03-01' };
const QUESTIONS = {
  'How likely are you to recommend us?': 'nps',
  'How much did you spend?': 'spent',
  'Did you find it?': 'found',
  'When did you visit?': 'visited',
  'Tell us more': 'note',
};

/** Answers of one survey: a scale with one `N/A`, decimals, yes/no, ISO days with one that does not exist, and free text. */
function records(): unknown[] {
  return Array.from({ length: 21 }, (_, i) => ({
    questions: QUESTIONS,
    answers: [
      {
        date: `2024-03-01 10:${String(i).padStart(2, '0')}:00`,
        customerId: `C${i}`,
        phone: `+30690000${String(i).padStart(4, '0')}`,
        questAnsMap: {
          nps: i === 20 ? 'N/A' : String(i % 11),
          spent: i % 2 === 0 ? `${i}.50` : String(i),
          found: i % 3 === 0 ? 'No' : 'yes',
          visited: i === 7 ? '2024-02-30' : `2024-02-${String(i + 1).padStart(2, '0')}`,
          note: i % 4 === 0 ? String(i) : `text ${i}`,
        },
      },
    ],
  }));
}

describe.each(testDestinations)('survey views on $name', (target) => {
  let destination: Destination;
  let ctx: StreamContext;
  let config: Awaited<ReturnType<typeof target.fresh>>['config'];
  beforeAll(async () => {
    ({ config } = await target.fresh());
    destination = await openDestination(config);
    ctx = offlineContext({ job: 'views', firstDay: WINDOW.start, timezone: 'Europe/Athens' });
    await loadRecords(surveysStream, WINDOW, records(), ctx, destination, 'r1');
  });
  afterAll(async () => destination?.close());

  it('types each column from its answers; what does not fit is NULL in the view and counted, and stays text in survey_answers', async () => {
    await destination.withConnection(async (conn) => {
      const columns = await conn.all<{
        question_code: string;
        column_name: string;
        answer_type: string;
        answers: number;
        answers_unparsed: number;
      }>(
        'SELECT question_code, column_name, answer_type, answers, answers_unparsed FROM survey_question_columns ORDER BY question_code',
      );
      expect(
        columns.map((c) => [
          c.question_code,
          c.column_name,
          c.answer_type,
          Number(c.answers),
          Number(c.answers_unparsed),
        ]),
      ).toEqual([
        ['found', 'q_found', 'boolean', 21, 0],
        ['note', 'q_note', 'text', 21, 0],
        ['nps', 'q_nps', 'integer', 21, 1],
        ['spent', 'q_spent', 'decimal', 21, 0],
        ['visited', 'q_visited', 'date', 21, 1],
      ]);
      const [{ view_name: view }] = (await conn.all<{ view_name: string }>('SELECT view_name FROM surveys')) as [
        { view_name: string },
      ];
      const types = await conn.all<{ column_name: string; data_type: string }>(
        `SELECT column_name, data_type FROM information_schema.columns WHERE table_catalog = current_database() AND table_name = $1 AND column_name LIKE 'q%' ORDER BY column_name`,
        [view],
      );
      const expected =
        target.name === 'duckdb'
          ? ['BOOLEAN', 'VARCHAR', 'INTEGER', 'DOUBLE', 'DATE']
          : ['boolean', 'text', 'integer', 'double precision', 'date'];
      expect(types.map((t) => t.data_type)).toEqual(expected);
      const [row] = await conn.all<Record<string, unknown>>(
        `SELECT q_nps + 1 AS next, q_spent * 2 AS twice, NOT q_found AS missed, q_visited FROM "${view}" WHERE customer_id = 'C3'`,
      );
      expect(row!.next).toBe(4);
      expect(row!.twice).toBe(6);
      expect(row!.missed).toBe(true);
      const nulls = await conn.all<{ customer_id: string; q_nps: number | null; q_visited: unknown }>(
        `SELECT customer_id, q_nps, q_visited FROM "${view}" WHERE q_nps IS NULL OR q_visited IS NULL ORDER BY customer_id`,
      );
      expect(nulls.map((n) => [n.customer_id, n.q_nps === null, n.q_visited === null])).toEqual([
        ['C20', true, false],
        ['C7', false, true],
      ]);
      const kept = await conn.all<{ answer: string }>(
        `SELECT a.answer FROM survey_answers a JOIN survey_responses r USING (response_id) WHERE r.customer_id IN ('C20', 'C7') AND a.question_code IN ('nps', 'visited') AND a.answer IN ('N/A', '2024-02-30') ORDER BY 1`,
      );
      expect(kept.map((k) => k.answer)).toEqual(['2024-02-30', 'N/A']);
      expect(await surveyPivotMismatches(conn)).toEqual([]);
    });
  });

  it('a warehouse whose survey_responses still has q_ columns loses them on opening, and gets its views back', async () => {
    await destination.withConnection(async (conn) => {
      // the shape loyalty-etl wrote before: a q_ column per code on the shared table, mapped in _etl_columns
      await conn.run(
        `ALTER TABLE survey_responses ADD COLUMN "q_nps" ${target.name === 'duckdb' ? 'VARCHAR' : 'text'}`,
      );
      await conn.run(
        `INSERT INTO _etl_columns (table_name, column_name, source_key, added_at, run_id) VALUES ('survey_responses', 'q_nps', 'nps', now(), 'old')`,
      );
      const [{ view_name: view }] = (await conn.all<{ view_name: string }>('SELECT view_name FROM surveys')) as [
        { view_name: string },
      ];
      await conn.run(`DROP VIEW "${view}"`);
      await conn.run(`CREATE VIEW "${view}" AS SELECT response_id, q_nps FROM survey_responses`);
    });
    await destination.close();
    destination = await openDestination(config);
    await destination.withConnection(async (conn) => {
      expect(await conn.all(`SELECT column_name FROM _etl_columns WHERE table_name = 'survey_responses'`)).toEqual([]);
      expect(await surveyPivotMismatches(conn)).toEqual([]);
      const [{ n }] = (await conn.all<{ n: number }>(
        `SELECT COUNT(q_nps) AS n FROM "${(await conn.all<{ view_name: string }>('SELECT view_name FROM surveys'))[0]!.view_name}"`,
      )) as [{ n: number }];
      expect(Number(n)).toBe(20);
    });
  });
});
