import type { WarehouseDialect } from '../warehouse/warehouse-dialect.js';

/**
 * The type a survey view gives a question's column, read from the question's answers: the first of `integer`,
 * `decimal`, `boolean`, `date` that at least {@link TYPE_SHARE} of its answers fit, else `text`.
 */
export type AnswerType = 'integer' | 'decimal' | 'boolean' | 'date' | 'text';

/** The order types are tried in: the narrowest first, so an NPS of `0`…`10` is an integer, not a decimal. */
export const ANSWER_TYPES: readonly Exclude<AnswerType, 'text'>[] = ['integer', 'decimal', 'boolean', 'date'];

/**
 * The share of a question's answers that must fit a type for its column to take it. A scale answered `N/A` now and
 * then stays a number (the `N/A` is NULL in the view and counted); free text that happens to hold numbers does not.
 */
export const TYPE_SHARE = 0.8;

// Patterns of the whole (trimmed) answer. Integers up to 9 digits fit INTEGER; decimals up to 15 digits on each side
// of a dot; dates are ISO days of years 1000-9999 (PostgreSQL has no year 0).
const INTEGER = '[+-]?[0-9]{1,9}';
const DECIMAL = '[+-]?[0-9]{1,15}([.][0-9]{1,15})?';
const DATE = '[1-9][0-9]{3}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])';
const TRUE = `('true', 'yes', 'y')`;
const FALSE = `('false', 'no', 'n')`;

/** A condition: the answer text `value` is a value of `type`. Never fails on any text (no cast of what does not fit). */
export function fitsType(dialect: WarehouseDialect, type: Exclude<AnswerType, 'text'>, value: string): string {
  const t = `TRIM(${value})`;
  switch (type) {
    case 'integer':
      return dialect.fullMatch(t, INTEGER);
    case 'decimal':
      return dialect.fullMatch(t, DECIMAL);
    case 'boolean':
      return `(LOWER(${t}) IN ${TRUE} OR LOWER(${t}) IN ${FALSE})`;
    case 'date':
      // the day must exist in its month (2024-02-30 does not): compared with the month's last day, cast only once the shape is right
      return `CASE WHEN ${dialect.fullMatch(t, DATE)} THEN CAST(SUBSTR(${t}, 9, 2) AS INTEGER) <= EXTRACT(DAY FROM CAST(SUBSTR(${t}, 1, 7) || '-01' AS DATE) + INTERVAL '1 month' - INTERVAL '1 day') ELSE FALSE END`;
  }
}

/** The answer text `value` as `type`: NULL where it does not fit (see {@link fitsType}). */
export function typedAnswer(dialect: WarehouseDialect, type: AnswerType, value: string): string {
  const t = `TRIM(${value})`;
  switch (type) {
    case 'text':
      return value;
    case 'integer':
      return `CASE WHEN ${fitsType(dialect, type, value)} THEN CAST(${t} AS ${dialect.typeName('integer')}) END`;
    case 'decimal':
      return `CASE WHEN ${fitsType(dialect, type, value)} THEN CAST(${t} AS ${dialect.typeName('double')}) END`;
    case 'boolean':
      return `CASE WHEN LOWER(${t}) IN ${TRUE} THEN TRUE WHEN LOWER(${t}) IN ${FALSE} THEN FALSE END`;
    case 'date':
      return `CASE WHEN ${fitsType(dialect, type, value)} THEN CAST(${t} AS DATE) END`;
  }
}

/** How many of a question's answers (not NULL) fit each type. */
export interface AnswerCounts {
  answers: number;
  fits: ReadonlyMap<Exclude<AnswerType, 'text'>, number>;
}

/** The type of a question's column, and how many of its answers do not fit it (NULL in the view). */
export function answerTypeOf(counts: AnswerCounts): { type: AnswerType; unparsed: number } {
  if (counts.answers > 0)
    for (const type of ANSWER_TYPES) {
      const fit = counts.fits.get(type) ?? 0;
      if (fit >= TYPE_SHARE * counts.answers) return { type, unparsed: counts.answers - fit };
    }
  return { type: 'text', unparsed: 0 };
}
