/** How answers to a question look. */
export type AnswerKind = 'rating' | 'nps' | 'yes-no' | 'text' | 'day' | 'day-in-words';

/** One question of a survey. */
export interface SurveyQuestion {
  readonly text: string;
  /** The key used in `questAnsMap`; some codes need sanitizing before they can name a column. */
  readonly code: string;
  readonly kind: AnswerKind;
}

/** A question set. Codes repeat across surveys (with other texts), as real setups do. */
export interface SurveyDefinition {
  readonly title: string;
  readonly questions: readonly SurveyQuestion[];
}

/** The surveys the emulated business runs. */
export const SURVEYS: readonly SurveyDefinition[] = [
  {
    title: 'Store visit',
    questions: [
      { text: 'How satisfied were you with your visit today?', code: 'Q1', kind: 'rating' },
      { text: 'How likely are you to recommend us to a friend?', code: 'nps', kind: 'nps' },
      { text: 'Rate the "freshness" of our food', code: 'Food Quality', kind: 'rating' },
      { text: 'Πώς σας φάνηκε το προσωπικό;', code: 'staff', kind: 'rating' },
      { text: "Anything else you'd like to tell us?", code: 'comments', kind: 'text' },
    ],
  },
  {
    title: 'Delivery',
    questions: [
      { text: 'Did your order arrive on time?', code: 'Q1', kind: 'yes-no' },
      { text: "How was the courier's service?", code: 'Q-2 (courier)', kind: 'rating' },
      { text: 'How likely are you to recommend us to a friend?', code: 'nps', kind: 'nps' },
    ],
  },
  {
    title: 'App feedback',
    questions: [
      { text: "What do you think of the app's new look? 📱", code: 'app_look', kind: 'rating' },
      { text: 'Would you order through the app again?', code: 'again', kind: 'yes-no' },
      { text: '¿Algo más que quieras decirnos?', code: 'comments', kind: 'text' },
    ],
  },
  {
    title: 'Quick NPS',
    questions: [{ text: 'On a scale of 0–10, how likely are you to recommend us?', code: 'NPS', kind: 'nps' }],
  },
  {
    // codes a warehouse must keep as data: a prototype's name, quotes and SQL, a 300-character code
    title: 'Kiosk',
    questions: [
      { text: 'Was the kiosk "easy"? (it\'s new)', code: '__proto__', kind: 'yes-no' },
      { text: 'How long did you wait?', code: 'wait"; DROP VIEW surveys;--', kind: 'rating' },
      { text: 'Anything about the kiosk?', code: `kiosk ${'k'.repeat(294)}`, kind: 'text' },
      { text: 'Did the kiosk work?', code: 'Q1', kind: 'yes-no' },
    ],
  },
];

/** The `questions` member of a survey as served: question text -> code, in the survey's order. */
export function questionMap(survey: SurveyDefinition): Record<string, string> {
  return Object.fromEntries(survey.questions.map((q) => [q.text, q.code]));
}

/** An object for names that are data: without a prototype, `__proto__` is a member like any other. */
export function dataObject<T>(): Record<string, T> {
  return Object.create(null) as Record<string, T>;
}

const TEXT_ANSWERS = [
  'Great coffee!',
  'Too slow at lunch time',
  'Ο καφές ήταν κρύος',
  'The "special" was not special',
  "It's fine, I guess",
  '👍',
  'line one\nline two',
  'NULLable? no, just a comment',
];

/** How people answer a question about a day when the form lets them type anything. */
const DAYS_IN_WORDS = ['last week', 'a while ago', 'yesterday', 'not sure', 'in spring'];

/** An answer of the given kind, chosen by `r` (uniform in [0, 1)). */
export function answerOf(kind: AnswerKind, r: number): string {
  switch (kind) {
    case 'rating':
      return String(1 + Math.floor(r * 5));
    case 'nps':
      return String(Math.floor(r * 11));
    case 'yes-no':
      return r < 0.7 ? 'yes' : 'no';
    case 'text':
      return TEXT_ANSWERS[Math.floor(r * TEXT_ANSWERS.length)]!;
    case 'day':
      return `2024-0${1 + Math.floor(r * 9)}-${String(1 + Math.floor((r * 2800) % 28)).padStart(2, '0')}`;
    case 'day-in-words':
      return DAYS_IN_WORDS[Math.floor(r * DAYS_IN_WORDS.length)]!;
  }
}
