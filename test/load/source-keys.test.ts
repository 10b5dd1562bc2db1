import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Destination } from '../../src/load/destination.js';
import { openDestination } from '../../src/load/warehouses.js';
import { silentLogger } from '../../src/log/logger.js';
import { loadSpan } from '../../src/pipeline/load-span.js';
import { accountsStream } from '../../src/streams/accounts.js';
import type { StreamContext, StreamDefinition } from '../../src/streams/stream.js';
import { surveysStream } from '../../src/streams/surveys.js';
import { cleanText } from '../../src/transform/values.js';
import { testDestinations } from '../helpers/destinations.js';
import { pivotMismatches, surveyPivotMismatches } from '../helpers/warehouse-reader.js';
import { offlineApi } from '../helpers/offline-api.js';

const WINDOW = { start: '2024-03-01', end: '2024-03-01' };

/** Names that are members of every plain JavaScript object, and the empty one. */
const OBJECT_INTERNALS = [
  '__proto__',
  'constructor',
  'toString',
  'hasOwnProperty',
  '',
  'valueOf',
  '__defineGetter__',
  'isPrototypeOf',
  'prototype',
];
const anyName = fc.oneof(fc.constantFrom(...OBJECT_INTERNALS), fc.string({ maxLength: 12 }));
type Entries = Array<[string, string | null]>;
/** Named values with distinct names, as a source map holds them. */
const namedValues = fc.uniqueArray(fc.tuple(anyName, fc.option(fc.string({ maxLength: 8 }), { nil: null })), {
  selector: ([name]) => name,
  maxLength: 6,
});

/** A JSON object text with these members, built without a plain object (which would drop `__proto__`). */
function objectText(entries: Array<[string, unknown]>): string {
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${JSON.stringify(v)}`).join(',')}}`;
}
const sorted = <T>(items: T[]) => items.map((i) => JSON.stringify(i)).sort();

/** Every internal name at once, so each case below meets them whatever the generator draws. */
const allInternals: Entries = OBJECT_INTERNALS.map((name, i) => [name, i % 3 === 0 ? null : `v${i}`]);

describe.each(testDestinations)('source keys named like object internals, into $name', (target) => {
  let destination: Destination;
  let ctx: StreamContext;
  let run = 0;
  beforeAll(async () => {
    destination = await openDestination((await target.fresh()).config);
    const api = offlineApi();
    const jobConfig = {
      streams: [],
      window_days: 1,
      lookback_days: 0,
      first_day: WINDOW.start,
      reject_threshold: 1,
      sweep_days: 7,
      postings: { customers: 'all' as const, max_span_days: 1 },
    };
    ctx = {
      api,
      pageSize: 100,
      concurrency: 1,
      timezone: 'Europe/Athens',
      job: 'keys',
      jobConfig,
      logger: silentLogger,
    };
  });
  afterAll(async () => destination.close());

  async function load(stream: StreamDefinition, records: unknown[]): Promise<string> {
    const runId = `${stream.name}-${++run}`;
    const inMemory: StreamDefinition = {
      ...stream,
      extract: async function* () {
        yield { windowStart: WINDOW.start, records, restart: false };
      },
    };
    const [counts] = await loadSpan(
      inMemory,
      [WINDOW],
      ctx,
      destination,
      { job: 'keys', runId, firstDay: WINDOW.start, rejectThreshold: 1 },
      silentLogger,
    );
    expect(counts!.rejected).toBe(0);
    return runId;
  }

  it('accounts: every custom field is in account_custom_fields and in its cf_ column', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(namedValues, { minLength: 1, maxLength: 5 }), async (maps) => {
        const prefix = `R${run + 1}-`;
        // parsed from JSON text, as the source client hands records on: every name is an own member
        const records = maps.map((fields, i) =>
          JSON.parse(`{"customerId":${JSON.stringify(`${prefix}${i}`)},"customFieldMap":${objectText(fields)}}`),
        );
        await load(accountsStream, records);
        await destination.withConnection(async (conn) => {
          const stored = await conn.all<{ customer_id: string; field_name: string; value: string | null }>(
            `SELECT customer_id, field_name, value FROM account_custom_fields WHERE customer_id LIKE $1`,
            [`${prefix}%`],
          );
          const expected = maps.flatMap((fields, i) =>
            fields.map(([name, value]) => ({
              customer_id: `${prefix}${i}`,
              field_name: name,
              value: cleanText(value),
            })),
          );
          expect(sorted(stored)).toEqual(sorted(expected));
          expect(await pivotMismatches(conn)).toEqual([]);
        });
      }),
      { numRuns: Number(process.env.PROPERTY_RUNS ?? 12), examples: [[[allInternals]]] },
    );
  });

  it('surveys: every answer is in survey_answers and its survey view column, every question in survey_questions', async () => {
    const questionSet = fc
      .uniqueArray(fc.tuple(anyName, anyName), { selector: ([text]) => text, maxLength: 5 })
      .map((qs) => qs.filter(([, code], i) => qs.findIndex(([, c]) => c === code) === i));
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.tuple(questionSet, namedValues), { minLength: 1, maxLength: 4 }),
        async (elements) => {
          const prefix = `S${run + 1}-`;
          const records = elements.map(([questions, answers], i) =>
            JSON.parse(
              `{"questions":${objectText(questions)},"answers":[{"date":"2024-03-01 10:00:00","customerId":${JSON.stringify(`${prefix}${i}`)},"questAnsMap":${objectText(answers)}}]}`,
            ),
          );
          await load(surveysStream, records);
          await destination.withConnection(async (conn) => {
            for (const [i, [questions, answers]] of elements.entries()) {
              const [response] = await conn.all<{ response_id: string; survey_id: string }>(
                `SELECT response_id, survey_id FROM survey_responses WHERE customer_id = $1`,
                [`${prefix}${i}`],
              );
              const storedAnswers = await conn.all<{ question_code: string; answer: string | null }>(
                `SELECT question_code, answer FROM survey_answers WHERE response_id = $1`,
                [response!.response_id],
              );
              expect(sorted(storedAnswers)).toEqual(
                sorted(answers.map(([code, answer]) => ({ question_code: code, answer: cleanText(answer) }))),
              );
              const storedQuestions = await conn.all<{ question_code: string; question_text: string }>(
                `SELECT question_code, question_text FROM survey_questions WHERE survey_id = $1`,
                [response!.survey_id],
              );
              expect(sorted(storedQuestions)).toEqual(
                sorted(questions.map(([text, code]) => ({ question_code: code, question_text: text }))),
              );
            }
            expect(await surveyPivotMismatches(conn)).toEqual([]);
          });
        },
      ),
      {
        numRuns: Number(process.env.PROPERTY_RUNS ?? 12),
        examples: [[[[allInternals.map(([name]) => [name, name] as [string, string]), allInternals]]]],
      },
    );
  });
});
