import { Stream, randomFor } from './random.js';
import { formatUtcWall } from './zone-clock.js';

/**
 * A field of a malformed record that cannot be read, while the record can: a correct warehouse loads the record
 * with that field NULL and keeps the raw value (`_etl_field_rejects`).
 */
export interface UnreadableField {
  /** The field's path in the record as served: `birthdate`, `customFieldMap.visits`. */
  field: string;
  /** Its value as served. */
  raw: unknown;
}

/**
 * A malformed record as served, and why. A record whose key cannot be read (or that is no record at all) must be
 * rejected whole; one with `unreadable` set loads, that field NULL.
 */
export interface BadRecord {
  payload: Record<string, unknown>;
  reason: string;
  unreadable?: UnreadableField;
}

/** A defect: why the record is malformed, how it is spoiled, and the field that cannot be read if it still loads. */
type Defect<A extends unknown[]> = [reason: string, spoil: (...args: A) => void, unreadable?: string];

/**
 * Position of bad records among the `total` records of one day: they are spread evenly, and slot `k`
 * holds a bad record exactly when this count grows between `k` and `k + 1`.
 */
export function badSlotsBefore(slot: number, bad: number, total: number): number {
  return total === 0 ? 0 : Math.floor((slot * bad) / total);
}

/** Number of bad records of a day holding `good` valid ones, at `rate` extra per valid record. */
export function badCountFor(
  seed: number,
  kind: typeof Stream.badAccountsPerDay | typeof Stream.badSurveysPerDay,
  day: number,
  good: number,
  rate: number,
): number {
  if (rate <= 0) return 0;
  return Math.floor(good * rate + randomFor(seed, kind, day).next());
}

const ACCOUNT_DEFECTS: ReadonlyArray<Defect<[record: Record<string, unknown>, index: number]>> = [
  ['customerId is missing', (r) => delete r.customerId],
  ['customerId is not a string', (r, index) => (r.customerId = 900_000 + index)],
  ['birthdate is not a YYYY-MM-DD date', (r) => (r.birthdate = '31/02/1990'), 'birthdate'],
  ['birthdate is not a real date', (r) => (r.birthdate = '1990-02-31'), 'birthdate'],
  ['profileSet is not a timestamp', (r) => (r.profileSet = 'yesterday'), 'profileSet'],
  ['customFieldMap is not an object', (r) => (r.customFieldMap = 'oops'), 'customFieldMap'],
  [
    'a custom field is not text',
    (r) => (r.customFieldMap = { loyaltyTier: 'Bronze', visits: { count: 3 } }),
    'customFieldMap.visits',
  ],
];

/** Malformed accounts-export record number `index` (global), set on a day starting at `dayStartMs`. */
export function badAccount(seed: number, index: number, dayStartMs: number): BadRecord {
  const random = randomFor(seed, Stream.badAccount, index);
  const [reason, spoil, unreadable] = random.pick(ACCOUNT_DEFECTS);
  const record: Record<string, unknown> = {
    phone: `3070${String(index).padStart(8, '0')}`,
    email: `bad.${index + 1}@example.invalid`,
    customerId: `BAD-${String(index + 1).padStart(6, '0')}`,
    first: 'Broken',
    last: 'Record',
    birthdate: '1990-01-01',
    source: 'import',
    profileSet: `${formatUtcWall(dayStartMs + random.int(0, 80_000) * 1000)} UTC`,
    country: 'Greece',
    customerSince: null,
    memberSince: 'NULL',
    nationality: '',
    gender: 'F',
    city: 'Athens',
    language: 'el',
    customFieldMap: { loyaltyTier: 'Bronze' },
  };
  spoil(record, index);
  return {
    payload: record,
    reason,
    ...(unreadable && { unreadable: { field: unreadable, raw: at(record, unreadable) } }),
  };
}

/** The value at `path` (`customFieldMap.visits`) of a record. */
function at(record: Record<string, unknown>, path: string): unknown {
  return path.split('.').reduce<unknown>((value, name) => (value as Record<string, unknown>)[name], record);
}

/** The served value of a malformed record's field as a correct warehouse holds it: null where it cannot be read. */
export function readable(bad: BadRecord, record: Record<string, unknown>, path: string): unknown {
  return bad.unreadable?.field === path ? null : at(record, path);
}

/**
 * The named text values (`customFieldMap`, `questAnsMap`) of a malformed record as a correct warehouse holds them:
 * none when the object itself cannot be read, a member that cannot be read null under its name.
 */
export function readableTexts(
  bad: BadRecord,
  record: Record<string, unknown>,
  path: string,
): Record<string, string | null> {
  const object = readable(bad, record, path);
  const out: Record<string, string | null> = Object.create(null) as Record<string, string | null>;
  if (object === null || typeof object !== 'object') return out;
  for (const [name, value] of Object.entries(object))
    out[name] = typeof value === 'string' && value.trim() !== '' && value.trim() !== 'NULL' ? value : null;
  return out;
}

const SURVEY_DEFECTS: ReadonlyArray<Defect<[element: Record<string, unknown>, answer: Record<string, unknown>]>> = [
  ['answers is not an array', (e) => (e.answers = 'oops')],
  ['questions is missing', (e) => delete e.questions],
  ['date is not a timestamp', (_, a) => (a.date = 'yesterday')],
  ['customerId is missing', (_, a) => delete a.customerId],
  ['questAnsMap is not an object', (_, a) => (a.questAnsMap = 'oops'), 'questAnsMap'],
  [
    'an answer is not text',
    (_, a) => ((a.questAnsMap as Record<string, unknown>).comments = ['3']),
    'questAnsMap.comments',
  ],
];

/**
 * Malformed survey element number `index` (global). It always carries exactly one answer record (or
 * none, when `answers` itself is broken), so rejecting per element or per answer counts the same.
 */
export function badSurveyElement(
  seed: number,
  index: number,
  dayStartMs: number,
  questions: Record<string, string>,
): BadRecord {
  const random = randomFor(seed, Stream.badSurvey, index);
  const [reason, spoil, unreadable] = random.pick(SURVEY_DEFECTS);
  const codes = Object.values(questions);
  const answer: Record<string, unknown> = {
    first: 'Broken',
    last: null,
    phone: null,
    email: `bad.survey.${index + 1}@example.invalid`,
    brand: 'Aroma Coffee',
    branch: 'Syntagma',
    staff: null,
    operator: 'NULL',
    date: `${formatUtcWall(dayStartMs + random.int(0, 80_000) * 1000)} UTC`,
    customerId: `BAD-S${String(index + 1).padStart(6, '0')}`,
    questAnsMap: Object.fromEntries(codes.map((code) => [code, '3'])),
    receipt: `BAD-RCP-${index + 1}`,
    tierName: 'Bronze',
  };
  const element: Record<string, unknown> = { answers: [answer], questions: { ...questions } };
  spoil(element, answer);
  return {
    payload: element,
    reason,
    ...(unreadable && { unreadable: { field: unreadable, raw: at(answer, unreadable) } }),
  };
}
