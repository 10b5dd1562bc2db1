import type { Random } from './random.js';
import { STORE_NAMES } from './name-pools.js';

/** How a custom field's values look, and how the profile endpoint describes it. */
export type CustomFieldKind = 'choice' | 'text' | 'flag' | 'date' | 'number';

/** One business-defined field that may appear as a `customFieldMap` key. */
export interface CustomFieldDefinition {
  /** The exact key used in `customFieldMap` (and `name` in profile fields). */
  readonly name: string;
  readonly label: string;
  readonly kind: CustomFieldKind;
  /** Allowed values of a choice field. */
  readonly options?: readonly string[];
  /** The profile definition's `format`: a luxon date pattern, or a number pattern whose last `.`/`,` is the decimal mark. */
  readonly format?: string;
}

const TIERS = ['Bronze', 'Silver', 'Gold', 'Platinum'] as const;

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
