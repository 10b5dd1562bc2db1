import type { Random } from './random.js';
import { STORE_NAMES } from './name-pools.js';

/** How a custom field's values look, and how the profile endpoint describes it; `choices`: several options at once. */
export type CustomFieldKind = 'choice' | 'choices' | 'text' | 'flag' | 'date' | 'number';

/** One business-defined field that may appear as a `customFieldMap` key. */
export interface CustomFieldDefinition {
  /** The exact key used in `customFieldMap` (and `name` in profile fields). */
  readonly name: string;
  readonly label: string;
  readonly kind: CustomFieldKind;
  /** Allowed values of a choice field (labels; each option's key is its label in lower case). */
  readonly options?: readonly string[];
  /** The options of a multiple-choice field (`choices`), keys and labels as the profile serves them. */
  readonly choices?: ReadonlyArray<{ readonly key: string; readonly value: string }>;
  /** The profile definition's `format`: a luxon date pattern, or a number pattern whose last `.`/`,` is the decimal mark. */
  readonly format?: string;
}

const TIERS = ['Bronze', 'Silver', 'Gold', 'Platinum'] as const;

/**
 * The options of the multiple-choice field `Interests`. Traps for a client that splits a list of them: a label
 * holding `, ` (`Kids, family`), and an option whose key and label hold `;` (`arts;crafts`) beside the options
 * `arts` and `crafts`, so that `arts;crafts` is also `arts` and `crafts` joined by `;`.
 */
export const INTEREST_OPTIONS: ReadonlyArray<{ readonly key: string; readonly value: string }> = [
  { key: 'wine', value: 'Wine' },
  { key: 'food', value: 'Food & drink' },
  { key: 'travel', value: 'Travel' },
  { key: 'kids', value: 'Kids, family' },
  { key: 'arts', value: 'Arts' },
  { key: 'crafts', value: 'Crafts' },
  { key: 'arts;crafts', value: 'Arts; crafts' },
];

/** The option of {@link INTEREST_OPTIONS} that is never chosen alone (see {@link choicesValue}). */
const TRAP_ALONE = 'arts;crafts';

/**
 * Every custom field name the emulator ever serves. Besides ordinary names it holds the ones a warehouse
 * must sanitize into column names: names that collide after lower-snake-casing, quotes and SQL, unicode,
 * an emoji, a 300-character name, a reserved word and surrounding spaces.
 */
export const CUSTOM_FIELD_POOL: readonly CustomFieldDefinition[] = [
  { name: 'loyaltyTier', label: 'Loyalty tier', kind: 'choice', options: TIERS },
  { name: 'favouriteStore', label: 'Favourite store', kind: 'choice', options: STORE_NAMES },
  { name: 'Preferred Contact', label: 'Preferred contact', kind: 'choice', options: ['email', 'sms', 'phone'] },
  { name: 'Favourite Store', label: 'Favourite store (legacy)', kind: 'text' },
  { name: 'favourite-store', label: 'Favourite store (web)', kind: 'text' },
  { name: 'favourite_store', label: 'Favourite store (app)', kind: 'text' },
  { name: "Robert'); DROP TABLE accounts;--", label: 'Injected name', kind: 'text' },
  { name: 'he said "hi"', label: 'Quoted name', kind: 'text' },
  { name: 'Ünïcödé naam', label: 'Unicode name', kind: 'text' },
  { name: '日本語フィールド', label: 'Japanese name', kind: 'text' },
  { name: '🎉 party guest', label: 'Emoji name', kind: 'flag' },
  { name: `Very long field name ${'z'.repeat(279)}`, label: 'Long name', kind: 'text' },
  { name: 'select', label: 'Reserved word', kind: 'text' },
  { name: '  padded name  ', label: 'Padded name', kind: 'text' },
  { name: 'anniversary', label: 'Anniversary', kind: 'date', format: 'yyyy-MM-dd' },
  { name: 'Last visit', label: 'Last visit', kind: 'date', format: 'dd/MM/yyyy' },
  { name: 'Monthly budget (€)', label: 'Monthly budget', kind: 'number', format: '#.##0,00' },
  { name: 'Interests', label: 'Interests', kind: 'choices', choices: INTEREST_OPTIONS },
];

/** The names of {@link CUSTOM_FIELD_POOL}, in pool order. */
export const CUSTOM_FIELD_NAMES: readonly string[] = CUSTOM_FIELD_POOL.map((field) => field.name);

/**
 * What people type into a typed field that is no value of its type: the service stores any text, so a warehouse
 * that types these columns must leave them NULL and say how many there are.
 */
const UNPARSEABLE_VALUES: Readonly<Record<'date' | 'number' | 'flag', readonly string[]>> = {
  date: ['soon', '31/02/2024', '2024-13-01'],
  number: ['n/a', '12,34,56', 'about 50'],
  flag: ['maybe'],
};

/** Share of values of a typed field (date, number, flag) that are {@link UNPARSEABLE_VALUES}; `anniversary` has none. */
const UNPARSEABLE_SHARE = 0.1;

const TEXT_VALUES = [
  'yes',
  'no',
  'Syntagma',
  "O'Brien's pick",
  'καφές',
  'say "cheese"',
  '🍕',
  'a, b; c',
  'x'.repeat(80),
];

/** A fresh non-null value for a field. */
export function customFieldValue(field: CustomFieldDefinition, random: Random): string {
  switch (field.kind) {
    case 'choice':
      return random.pick(field.options ?? ['']);
    case 'choices':
      return choicesValue(field.choices ?? [], random);
    case 'flag':
      if (random.chance(UNPARSEABLE_SHARE)) return random.pick(UNPARSEABLE_VALUES.flag);
      return random.chance(0.5) ? 'true' : 'false';
    case 'date':
      if (field.format === 'yyyy-MM-dd') return `20${random.int(10, 23)}-0${random.int(1, 9)}-1${random.int(0, 9)}`;
      if (random.chance(UNPARSEABLE_SHARE)) return random.pick(UNPARSEABLE_VALUES.date);
      return `${random.int(10, 28)}/${String(random.int(1, 12)).padStart(2, '0')}/20${random.int(15, 24)}`;
    case 'number':
      if (random.chance(UNPARSEABLE_SHARE)) return random.pick(UNPARSEABLE_VALUES.number);
      return decimalComma(random.int(0, 250_000) / 100);
    case 'text':
      return random.pick(TEXT_VALUES);
  }
}

/** `1234.5` as the emulated business writes money: `1.234,50` (dot groups thousands, comma marks decimals). */
function decimalComma(value: number): string {
  const [whole, cents] = value.toFixed(2).split('.');
  return `${whole!.replace(/\B(?=(\d{3})+(?!\d))/g, '.')},${cents}`;
}

/**
 * A multiple-choice field's value in its canonical form, as the ground truth holds it whatever the reading: the
 * chosen option keys, one to three in option order, as a JSON array (`["wine","kids"]`). The trap option is never
 * chosen alone: served as keys joined by `,` or `|`, `arts;crafts` alone is also `arts` and `crafts` joined by `;`,
 * which no client could tell apart, so a ground truth holding it would depend on the reading.
 */
function choicesValue(options: ReadonlyArray<{ key: string }>, random: Random): string {
  const count = random.int(1, 3);
  const chosen = new Set<number>();
  for (let n = 0; n < count; n++) chosen.add(random.int(0, options.length - 1));
  let keys = [...chosen].sort((a, b) => a - b).map((i) => options[i]!.key);
  if (keys.length === 1 && keys[0] === TRAP_ALONE) keys = [options[0]!.key, TRAP_ALONE];
  return JSON.stringify(keys);
}

/** How a service may send the options of a multiple-choice field in one string (the `choiceLists` reading). */
export type ChoiceListForm = 'comma' | 'semicolon' | 'pipe' | 'json' | 'labels';

const SEPARATOR_OF: Readonly<Record<Exclude<ChoiceListForm, 'json'>, string>> = {
  comma: ',',
  semicolon: ';',
  pipe: '|',
  labels: ', ',
};

/**
 * A custom field's value as served under `form`: a multiple-choice field's canonical JSON array of keys becomes
 * its keys joined by `,` (`comma`, the default), `;` or `|`, stays a JSON array (`json`), or becomes its labels joined
 * by `, ` (`labels`). Any other field's value, and null, is served as it is.
 *
 * @example servedFieldValue('Interests', '["wine","kids"]', 'labels') // 'Wine, Kids, family'
 */
export function servedFieldValue(name: string, value: string | null, form: ChoiceListForm = 'comma'): string | null {
  const field = MULTIPLE_CHOICE_FIELDS.get(name);
  const keys = field && value !== null && form !== 'json' ? optionKeys(value) : null;
  if (!keys) return value;
  const items = form === 'labels' ? keys.map((k) => field!.choices!.find((o) => o.key === k)?.value ?? k) : keys;
  return items.join(SEPARATOR_OF[form as Exclude<ChoiceListForm, 'json'>]);
}

/** A canonical value's option keys; null for any other text (a value a client wrote through a modify is kept as written). */
function optionKeys(value: string): string[] | null {
  try {
    const keys: unknown = JSON.parse(value);
    return Array.isArray(keys) && keys.every((k) => typeof k === 'string') ? keys : null;
  } catch {
    return null;
  }
}

/** The custom fields of a version as served under `form` ({@link servedFieldValue}). */
export function servedFields(
  fields: ReadonlyArray<readonly [string, string | null]>,
  form: ChoiceListForm = 'comma',
): Record<string, string | null> {
  const out = Object.create(null) as Record<string, string | null>;
  for (const [name, value] of fields) out[name] = servedFieldValue(name, value, form);
  return out;
}

/** The fields of {@link CUSTOM_FIELD_POOL} whose values are several options, by name. */
const MULTIPLE_CHOICE_FIELDS: ReadonlyMap<string, CustomFieldDefinition> = new Map(
  CUSTOM_FIELD_POOL.filter((f) => f.kind === 'choices').map((f) => [f.name, f]),
);
