import { ACCOUNT_COLUMNS } from './account-tables.js';
import { table, type TableDoc } from './table-doc.js';

/** Survey answers and the surveys, questions and views that read them. */
export const SURVEY_TABLES: readonly TableDoc[] = [
  table(
    'survey_responses',
    ['response_id'],
    'analysts',
    "One row per survey answer record (a customer answering a survey once). The answers are in survey_answers and in the survey's view.",
    [
      [
        'response_id',
        'Derived key: SHA-256 of the survey, customer, time, every field and every answer (and the occurrence, for exact duplicates).',
      ],
      ['survey_id', 'The survey answered: derived from its question set; see surveys.'],
      ['answered_at', 'When the survey was answered (UTC).'],
      ['brand', 'Brand the answer is about.'],
      ['branch', 'Branch the answer is about.'],
      ['staff', 'Staff member named in the answer record.'],
      ['operator', 'Operator who recorded the answer.'],
      ['receipt', 'Receipt number the answer is about.'],
      ['tier_name', "The customer's tier when answering."],
      ...ACCOUNT_COLUMNS.filter(([c]) => ['first_name', 'last_name', 'phone', 'email'].includes(c)),
    ],
  ),
  table(
    'survey_answers',
    ['response_id', 'question_code'],
    'analysts',
    'Every answer of every response, long form, as the text the service sent.',
    [
      ['response_id', 'The response; see survey_responses.'],
      [
        'question_code',
        "The question's code in its survey (the same code may name different questions in different surveys).",
      ],
      ['answer', 'The answer, as text.'],
    ],
  ),
  table('survey_questions', ['survey_id', 'question_code'], 'analysts', "Each survey's questions.", [
    ['survey_id', 'The survey.'],
    ['question_code', "The question's code in the survey."],
    ['question_text', 'The question as asked.'],
    [
      'question_order',
      'Its place in the survey, from 1 (the first labels the survey); NULL for questions loaded before it was kept.',
    ],
  ]),
  table(
    'surveys',
    ['survey_id'],
    'analysts',
    'One row per survey, rebuilt at every surveys load: its label, counts and view.',
    [
      ['survey_id', "Derived key: SHA-256 of the survey's question set (a changed set is a new survey)."],
      ['label', "The text of the survey's first question."],
      ['question_count', 'Questions in the survey.'],
      ['responses', 'Rows of survey_responses for it.'],
      ['first_answer_at', 'Its first answer (UTC).'],
      ['last_answer_at', 'Its last answer (UTC).'],
      [
        'view_name',
        'The view holding the responses of this version of the survey (this question set) with a typed column per question.',
      ],
      [
        'stable_view',
        "The view to read: the survey's responses across every version of its question set (versions share their first question), a typed column per question any version asked; its name never changes.",
      ],
    ],
  ),
  table(
    'survey_question_columns',
    ['survey_id', 'question_code'],
    'analysts',
    "Where each survey question's answers are: its survey's view and column, the column's type and the answers that do not fit it.",
    [
      ['survey_id', 'The survey.'],
      ['question_code', "The question's code."],
      ['view_name', "The survey's view."],
      ['column_name', "The question's column in that view."],
      ['answer_type', 'integer, decimal, boolean, date or text: the first type at least 80% of the answers fit.'],
      ['answers', 'Answers that are not NULL.'],
      ['answers_unparsed', 'Answers that do not fit answer_type: NULL in the view, text in survey_answers.'],
    ],
  ),
];
