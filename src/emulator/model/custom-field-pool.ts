import type { Random } from './random.js';
import { STORE_NAMES } from './name-pools.js';

/** How a custom field's values look, and how the profile endpoint describes it. */
export type CustomFieldKind = 'choice' | 'text' | 'flag' | 'date';

/** One business-defined field that may appear as a `customFieldMap` key. */
export interface CustomFieldDefinition {
  /** The exact key used in `customFieldMap` (and `name` in profile fields). */
  readonly name: string;
  readonly label: string;
  readonly kind: CustomFieldKind;
  /** Allowed values of a choice field. */
  readonly options?: readonly string[];
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
  { name: 'anniversary', label: 'Anniversary', kind: 'date' },
];

/** The names of {@link CUSTOM_FIELD_POOL}, in pool order. */
export const CUSTOM_FIELD_NAMES: readonly string[] = CUSTOM_FIELD_POOL.map((field) => field.name);

const TEXT_VALUES = ['yes', 'no', 'Syntagma', "O'Brien's pick", 'καφές', 'say "cheese"', '🍕', 'a, b; c', 'x'.repeat(80)];

/** A fresh non-null value for a field. */
export function customFieldValue(field: CustomFieldDefinition, random: Random): string {
  switch (field.kind) {
    case 'choice':
      return random.pick(field.options ?? ['']);
    case 'flag':
      return random.chance(0.5) ? 'true' : 'false';
    case 'date':
      return `20${random.int(10, 23)}-0${random.int(1, 9)}-1${random.int(0, 9)}`;
    case 'text':
      return random.pick(TEXT_VALUES);
  }
}
