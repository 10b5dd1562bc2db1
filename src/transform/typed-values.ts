import { DateTime } from 'luxon';
import { readFieldOptions } from './choice-lists.js';

/** The types a custom field's text can be read as; `label`: a choice field's option key read as its label. */
export type FieldKind = 'date' | 'number' | 'boolean' | 'label';

/** How a custom field's values are read: its kind and the pattern they follow. */
export interface FieldType {
  kind: FieldKind;
  /**
   * A luxon date pattern (`dd/MM/yyyy`), or a number pattern (`#.##0,00`); null: the kind's plain form. For `label`,
   * the field's options as `[[key, label], …]` JSON ({@link choiceTypeOf}).
   */
  format: string | null;
}

/** A number pattern: digit placeholders with grouping and decimal marks, nothing else. */
const NUMBER_PATTERN = /^[#0]+([.,'\u00a0 ][#0]+)*$/;
/** A date pattern holds a year, month or day token of luxon's. */
const DATE_TOKENS = /[yMdL]/;

/**
 * The type a custom field's `format` says it has for sure, or null when it says none (no format, or one that is no
 * date or number pattern). The spec gives `typeId` no meaning, so no code types a field: a field without a format is
 * typed from its values instead (`load/derived/typed-fields.ts`).
 *
 * @example
 * formatTypeOf('dd/MM/yyyy') // { kind: 'date', format: 'dd/MM/yyyy' }
 * formatTypeOf('#.##0,00')   // { kind: 'number', format: '#.##0,00' }
 * formatTypeOf(null)         // null
 */
export function formatTypeOf(format: string | null): FieldType | null {
  const pattern = format?.trim() || null;
  if (pattern && NUMBER_PATTERN.test(pattern)) return { kind: 'number', format: pattern };
  if (pattern && DATE_TOKENS.test(pattern)) return { kind: 'date', format: pattern };
  return null;
}

/** Values of a boolean field, lower-cased: the words people and systems write for yes and no. */
const BOOLEAN_WORDS: ReadonlyMap<string, boolean> = new Map([
  ['true', true],
  ['false', false],
  ['yes', true],
  ['no', false],
  ['y', true],
  ['n', false],
  ['1', true],
  ['0', false],
  ['on', true],
  ['off', false],
]);

/**
 * A custom field's text read as its type, in a form both warehouses cast: `YYYY-MM-DD`, a plain decimal
 * (`-1234.5`) or `true`/`false`. Null when the text is no value of the type.
 *
 * @example
 * parseTypedValue({ kind: 'date', format: 'dd/MM/yyyy' }, '05/03/2024') // '2024-03-05'
 * parseTypedValue({ kind: 'number', format: '#.##0,00' }, '1.234,50')  // '1234.50'
 * parseTypedValue({ kind: 'date', format: 'dd/MM/yyyy' }, '31/02/2024') // null
 */
export function parseTypedValue(type: FieldType, raw: string): string | null {
  const text = raw.trim();
  if (text === '') return null;
  switch (type.kind) {
    case 'date': {
      // English month names: the locale of a pattern's MMM tokens is not given, and the source's own dates are English
      const day = DateTime.fromFormat(text, type.format ?? 'yyyy-MM-dd', { zone: 'UTC', locale: 'en-US' });
      return day.isValid && day.year >= 1 && day.year <= 9999 ? day.toISODate() : null;
    }
    case 'number':
      return parseNumber(text, type.format);
    case 'boolean': {
      const flag = BOOLEAN_WORDS.get(text.toLowerCase());
      return flag === undefined ? null : String(flag);
    }
    case 'label': {
      // an option's key, else (a source that sends the label itself) an option's label; anything else is no option
      const options: Array<[string, string]> = JSON.parse(type.format ?? '[]');
      return options.find(([key]) => key === raw)?.[1] ?? options.find(([, label]) => label === raw)?.[1] ?? null;
    }
  }
}

/**
 * A choice field's type from its definition's `options` (`[{key, value}]`, as JSON text): its values are option keys,
 * read as their labels. Null when it has no option (not a choice field).
 *
 * @example
 * choiceTypeOf('[{"key":"gold","value":"Gold"}]') // { kind: 'label', format: '[["gold","Gold"]]' }
 */
export function choiceTypeOf(options: string | null): FieldType | null {
  const pairs = readFieldOptions(options).map((o) => [o.key, o.label]);
  return pairs.length > 0 ? { kind: 'label', format: JSON.stringify(pairs) } : null;
}

/** Most digits a number may have: what a double holds exactly, so the typed column is the written value. */
const MAX_DIGITS = 15;

/**
 * A number written with the pattern's marks: the pattern's last `.` or `,` is the decimal mark when its digits
 * after it are not exactly three `#0`-groups of a grouping (`#,##0` groups; `#.##0,00` and `0,0` mark
 * decimals); any other mark groups digits. Without a pattern: a plain decimal with a dot.
 */
function parseNumber(text: string, format: string | null): string | null {
  const { decimal, group } = numberMarks(format);
  const m = /^([+-]?)(.*)$/.exec(text.replace(/[\s\u00a0]/g, ''))!;
  const [whole, fraction, extra] = m[2]!.split(decimal);
  if (extra !== undefined || whole === undefined) return null;
  // groups of three digits after the first group, when grouping marks are used at all
  const groups = group ? whole.split(group) : [whole];
  if (groups.length > 1 && (!/^\d{1,3}$/.test(groups[0]!) || groups.slice(1).some((g) => !/^\d{3}$/.test(g))))
    return null;
  const digits = groups.join('');
  if (!/^\d+$/.test(digits) || (fraction !== undefined && !/^\d+$/.test(fraction))) return null;
  if (digits.replace(/^0+/, '').length + (fraction?.length ?? 0) > MAX_DIGITS) return null;
  return `${m[1] === '-' ? '-' : ''}${digits}${fraction === undefined ? '' : `.${fraction}`}`;
}

function numberMarks(format: string | null): { decimal: string; group: string | null } {
  if (!format) return { decimal: '.', group: null };
  const marks = [...format].filter((c) => !'#0'.includes(c));
  const last = marks.at(-1);
  if (last === undefined) return { decimal: '.', group: null };
  const afterLast = format.slice(format.lastIndexOf(last) + 1);
  const groupsOnly = marks.every((c) => c === last) && afterLast.length === 3 && format.includes('#');
  if (groupsOnly) return { decimal: last === '.' ? ',' : '.', group: last };
  const group = marks.find((c) => c !== last) ?? null;
  return { decimal: last, group };
}
