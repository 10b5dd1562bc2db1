import { z } from 'zod';
import { readAllPages } from '../extract/paged-listing.js';
import { UNLISTED_COLUMN, type TableSpec } from '../load/table-spec.js';
import { canonicalJson, contentKey } from '../transform/keys.js';
import { OccurrenceKeys } from '../transform/occurrences.js';
import { FIELD_REJECTS, LenientFields } from '../transform/field-problems.js';
import { RecordError } from '../transform/record-error.js';
import { parseSourceTimestamp } from '../transform/timestamps.js';
import { UNLISTED, unlistedJson, unlistedMembers } from '../transform/unlisted.js';
import { cleanKey, stagedObject } from '../transform/values.js';
import type { NormalizedRecord, StreamContext, StreamDefinition } from './stream.js';
import { customerIdSchema, withCustomerId } from './customer-id.js';
import { listingSpanWindows } from './listing-span.js';
import { sourceMap } from './source-map.js';
import { zodProblem } from './zod-problem.js';

/** The members of one answer record (`answers[]` element of Survey Answers) the spec lists. */
const ANSWER_FIELDS = [
  'first',
  'last',
  'phone',
  'email',
  'brand',
  'branch',
  'staff',
  'operator',
  'date',
  'customerId',
  'questAnsMap',
  'receipt',
  'tierName',
];

/**
 * What the surveys stream normalizes: one answer record with its survey's questions. The extractor splits
 * every `data[]` element of the listing into these, so one bad answer is rejected alone. Only what keys the answer
 * is checked here (its survey's questions, its customer and its time, which files it under its window); its other
 * fields are read one by one, leniently.
 */
const surveyAnswerRecordSchema = z.looseObject({
  answers: z.tuple([z.looseObject({ customerId: customerIdSchema, date: z.string() })]),
  questions: sourceMap(z.string()),
});

/** The members the spec lists: of a listing element, and of one of its answers. */
export const ELEMENT_MEMBERS: ReadonlySet<string> = new Set(['answers', 'questions']);
// `accountId` is read as `customerId` (see `withCustomerId`)
export const ANSWER_MEMBERS: ReadonlySet<string> = new Set([...ANSWER_FIELDS, 'accountId']);

/** The staging-only column of `survey_responses` that holds a response's answers. */
const ANSWERS = '_answers';

export const surveyResponsesTable: TableSpec = {
  name: 'survey_responses',
  key: ['response_id'],
  merge: { kind: 'replace-window' },
  // no answer columns: a code names different questions in different surveys, so each survey's own view holds its
  // questions, typed (load/derived/survey-catalog.ts)
  derived: 'surveys',
  columns: [
    { name: 'response_id', type: 'text' },
    { name: 'survey_id', type: 'text' },
    { name: 'customer_id', type: 'text' },
    { name: 'answered_at', type: 'timestamptz' },
    { name: 'brand', type: 'text' },
    { name: 'branch', type: 'text' },
    { name: 'staff', type: 'text' },
    { name: 'operator', type: 'text' },
    { name: 'receipt', type: 'text' },
    { name: 'tier_name', type: 'text' },
    { name: 'first_name', type: 'text' },
    { name: 'last_name', type: 'text' },
    { name: 'phone', type: 'text' },
    { name: 'email', type: 'text' },
    UNLISTED_COLUMN,
  ],
  recordType: 'survey answer',
  // the response's answers, `{question code: answer | null}`: `survey_answers` reads them
  stagingOnly: [{ name: ANSWERS, type: 'json' }],
};

export const surveyAnswersTable: TableSpec = {
  name: 'survey_answers',
  key: ['response_id', 'question_code'],
  merge: { kind: 'replace-window' },
  stagedWith: {
    table: 'survey_responses',
    kind: 'entries',
    column: ANSWERS,
    nameColumn: 'question_code',
    valueColumn: 'answer',
  },
  columns: [
    { name: 'response_id', type: 'text' },
    { name: 'question_code', type: 'text' },
    { name: 'answer', type: 'text' },
  ],
};

export const surveyQuestionsTable: TableSpec = {
  name: 'survey_questions',
  key: ['survey_id', 'question_code'],
  merge: { kind: 'upsert' },
  columns: [
    { name: 'survey_id', type: 'text' },
    { name: 'question_code', type: 'text' },
    { name: 'question_text', type: 'text' },
    // the question's place in its survey's `questions` map, from 1: the first one labels the survey
    { name: 'question_order', type: 'integer' },
  ],
};

/** A survey is identified by its question set: the content key of its `questions` map. */
export function surveyIdOf(questions: ReadonlyMap<string, string>): string {
  return contentKey('survey', canonicalJson(questions));
}

/**
 * A normalizer for one window of the surveys stream. `response_id` is the content key of the normalized answer
 * record (its survey, customer, time, every field and every answer), with an occurrence number for exact
 * duplicates counted within the window (an answer's time puts its duplicates in the same window); the questions of a
 * survey are emitted once per window.
 */
export function surveyNormalizer(timezone: string): (raw: unknown) => NormalizedRecord {
  const keys = new OccurrenceKeys();
  const surveysEmitted = new Set<string>();
  return (raw) => {
    const parsed = surveyAnswerRecordSchema.safeParse(answerWithCustomerId(raw));
    if (!parsed.success) throw new RecordError('', zodProblem(parsed.error));
    const { questions } = parsed.data;
    const a = parsed.data.answers[0] as Record<string, unknown> & { customerId: string; date: string };
    const surveyId = surveyIdOf(questions);
    const fields = new LenientFields();
    const answers = fields
      .namedTexts('questAnsMap', a.questAnsMap)
      .map(([code, answer]) => ({ code, answer }))
      .sort((x, y) => (x.code < y.code ? -1 : x.code > y.code ? 1 : 0));
    const text = (field: string) => fields.text(field, a[field]);
    const response = {
      survey_id: surveyId,
      customer_id: a.customerId.trim(),
      answered_at: parseSourceTimestamp(a.date, timezone, 'date'),
      brand: text('brand'),
      branch: text('branch'),
      staff: text('staff'),
      operator: text('operator'),
      receipt: text('receipt'),
      tier_name: text('tierName'),
      first_name: text('first'),
      last_name: text('last'),
      phone: text('phone'),
      email: text('email'),
    };
    // an unreadable value is part of the content: two answers differing only there keep two keys
    const problems = fields.failed ? [fields.keyPart()] : [];
    const responseId = keys.next(contentKey('response', canonicalJson(response), canonicalJson(answers), ...problems));
    const staged = stagedObject(answers.map((x) => [x.code, x.answer] as const));
    // the element's members beside `answers` and `questions`, and the answer's own (which the key does not read)
    const element = raw as { answers: unknown[] };
    const unlisted = unlistedJson([
      ...unlistedMembers(element, ELEMENT_MEMBERS),
      ...unlistedMembers(element.answers[0], ANSWER_MEMBERS, 'answers[].'),
    ]);
    const out: NormalizedRecord = {
      survey_responses: [{ response_id: responseId, ...response, [UNLISTED]: unlisted, [ANSWERS]: staged }],
    };
    if (fields.failed) out[FIELD_REJECTS] = fields.rows(responseId);
    if (!surveysEmitted.has(surveyId)) {
      surveysEmitted.add(surveyId);
      out.survey_questions = Array.from(questions, ([question, code], i) => ({
        survey_id: surveyId,
        question_code: cleanKey(code),
        question_text: cleanKey(question),
        question_order: i + 1,
      }));
    }
    return out;
  };
}

/** A survey answer record whose answer names its customer `customerId` (see {@link withCustomerId}). */
function answerWithCustomerId(raw: unknown): unknown {
  const answers = (raw as { answers?: unknown } | null)?.answers;
  if (!Array.isArray(answers) || answers.length !== 1) return raw;
  const answer = withCustomerId(answers[0]);
  return answer === answers[0] ? raw : { ...(raw as object), answers: [answer] };
}

/** Splits a listing element into one record per answer, each with the element's questions. */
export function splitSurveyElement(element: unknown): unknown[] {
  if (element && typeof element === 'object' && !Array.isArray(element)) {
    const { answers, ...rest } = element as Record<string, unknown>;
    if (Array.isArray(answers)) return answers.map((answer) => ({ ...rest, answers: [answer] }));
  }
  return [element];
}

/**
 * The surveys stream: every page of each window's listing, read in order; a span holds consecutive windows up to
 * 31 days ({@link listingSpanWindows}), committed together, and each window's responses replace what that window
 * held. Keys are counted per window (see `surveyNormalizer`), so they are the same whatever the span.
 */
export const surveysStream: StreamDefinition = {
  name: 'surveys',
  tables: [surveyResponsesTable, surveyAnswersTable, surveyQuestionsTable],
  maxWindowsPerSpan: listingSpanWindows,
  lanes: (concurrency) => concurrency,
  async *extract(ctx: StreamContext, span) {
    for (const window of span) {
      // Survey elements carry no key: a read of more than one page is confirmed by a second read (see readAllPages).
      const pages = readAllPages({
        label: `surveys ${window.start}..${window.end}`,
        pageSize: ctx.pageSize,
        fetchPage: (n) => ctx.api.surveysPage(window, n, ctx.pageSize),
        concurrency: ctx.concurrency,
      });
      for await (const page of pages)
        yield {
          windowStart: window.start,
          records: page.records.flatMap(splitSurveyElement),
          restart: page.restart,
          reason: page.reason,
        };
      yield { windowStart: window.start, records: [], restart: false, windowComplete: true };
    }
  },
  // totalCount counts survey elements, not answers: enough to tell an empty stretch
  countRange: async (api, range) => (await api.surveysPage(range, 1, 1)).totalCount,
  normalizer: (ctx) => surveyNormalizer(ctx.timezone),
};
