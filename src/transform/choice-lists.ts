/**
 * A custom field's definition as far as its values are read: several options at once (`multiple`), and its options.
 * The definition of a name is the one `profile_fields` gives it (of the main profile, else a used one, else the
 * lowest profile id; `load/derived/field-definitions.ts`).
 */
export interface FieldDefinition {
  multiple: boolean;
  options: ReadonlyArray<{ key: string; label: string }>;
}

/** Custom field name → its definition; a name without one is text. */
export type FieldDefinitions = ReadonlyMap<string, FieldDefinition>;

/**
 * How the options of a multiple-choice field travel in its one string (`source.multiple_choice`): `auto` reads any
 * form a value can only be read one way in; the others are the service's one form.
 */
export type ChoiceListForm = 'auto' | 'comma' | 'semicolon' | 'pipe' | 'json';

const SEPARATORS: Readonly<Record<'comma' | 'semicolon' | 'pipe', string>> = { comma: ',', semicolon: ';', pipe: '|' };

/** One option of a choice field as the warehouse holds it: its key and label. */
export interface ChosenOption {
  key: string;
  label: string;
}

/** A value read as a list of options, or why it cannot be read as exactly one. */
export type ChoiceList = { options: ChosenOption[] } | { problem: string };

/**
 * The options of a choice field's definition, `[{key, value}]`: as JSON text (how the warehouse holds
 * `profile_fields.options`) or already parsed (how the service sends it). An option without a text or number key and a
 * text label is left out; anything that is no array has none.
 */
export function readFieldOptions(options: unknown): Array<{ key: string; label: string }> {
  let parsed = options;
  if (typeof options === 'string') {
    try {
      parsed = JSON.parse(options);
    } catch {
      return [];
    }
  }
  if (!Array.isArray(parsed)) return [];
  const out: Array<{ key: string; label: string }> = [];
  for (const option of parsed) {
    if (!option || typeof option !== 'object') continue;
    const { key, value } = option as { key?: unknown; value?: unknown };
    if ((typeof key === 'string' || typeof key === 'number') && typeof value === 'string')
      out.push({ key: String(key), label: value });
  }
  return out;
}

/** Most steps spent reading one value: a value that takes more is refused, never guessed. */
const STEP_BUDGET = 20_000;

/**
 * The options a multiple-choice field's value names, in the order it names them. The spec gives the field's
 * `options` but not how several of them travel in one string, so a value is read in every form `form` allows: a JSON
 * array, and the options joined by `,`, `;` or `|` (spaces around a separator allowed), each named by its key or its
 * label. It is read when exactly one list of options comes out of all of them (the same option twice is no list);
 * otherwise the answer says why: no list at all, or two (an option whose key or label holds a separator, such as
 * `arts;crafts` beside `arts` and `crafts`). Never a guess.
 *
 * @example
 * const options = [{ key: 'arts', label: 'Arts' }, { key: 'crafts', label: 'Crafts' }, { key: 'arts;crafts', label: 'Arts; crafts' }];
 * readChoiceList('arts,crafts', options, 'auto')  // { options: [arts, crafts] }
 * readChoiceList('arts;crafts', options, 'auto')  // { problem: 'reads as more than one list of options: …' }
 * readChoiceList('arts;crafts', options, 'comma') // { options: [arts;crafts] }
 */
export function readChoiceList(
  value: string,
  options: ReadonlyArray<{ key: string; label: string }>,
  form: ChoiceListForm,
): ChoiceList {
  const reader = new ListReader(options);
  const lists = new Map<string, ChosenOption[]>();
  const add = (list: ChosenOption[]) => lists.set(JSON.stringify(list.map((o) => o.key)), list);
  if (form === 'auto' || form === 'json') for (const list of reader.json(value)) add(list);
  for (const [name, separator] of Object.entries(SEPARATORS)) {
    if (form !== 'auto' && form !== name) continue;
    for (const list of reader.joined(value, separator)) {
      add(list);
      if (lists.size > 1) break;
    }
    if (lists.size > 1) break;
  }
  if (reader.exhausted) return { problem: 'has too many ways to be read as a list of options: not read' };
  const found = [...lists.values()];
  if (found.length === 1) return { options: found[0]! };
  const how =
    form === 'auto'
      ? 'a JSON array or options joined by ",", ";" or "|"'
      : form === 'json'
        ? 'a JSON array of options'
        : `options joined by ${JSON.stringify(SEPARATORS[form])}`;
  if (found.length === 0) return { problem: `is not ${how} of the field's options (keys or labels)` };
  const readings = found.map((list) => JSON.stringify(list.map((o) => o.key))).join(' or ');
  return {
    problem:
      `reads as more than one list of options (${readings}) as ${how}` +
      (form === 'auto' ? ': set source.multiple_choice if the service joins them one way' : ''),
  };
}

/**
 * The label of a single-choice field's value: the option whose key it is, else (a service that sends labels) the
 * option whose label it is; null when it is no option. The same rule as the typed column `cf_<name>_label`.
 */
export function optionLabel(value: string, options: ReadonlyArray<{ key: string; label: string }>): string | null {
  return options.find((o) => o.key === value)?.label ?? options.find((o) => o.label === value)?.label ?? null;
}

/** What JSON text an array can start with: JSON's own white space (not JavaScript's), then `[`. */
const JSON_ARRAY_START = /^[ \t\n\r]*\[/;

/** {@link optionNames} of each field's options, worked out once for all the values read against them. */
const NAMES = new WeakMap<object, ReadonlyArray<readonly [string, readonly ChosenOption[]]>>();

/** Every text naming one of `options` (its key, its label), longest first, each with the options it names. */
function optionNames(
  options: ReadonlyArray<{ key: string; label: string }>,
): ReadonlyArray<readonly [string, readonly ChosenOption[]]> {
  const known = NAMES.get(options);
  if (known) return known;
  const byName = new Map<string, ChosenOption[]>();
  const seen = new Set<string>();
  for (const o of options) {
    if (seen.has(o.key)) continue;
    seen.add(o.key);
    for (const name of new Set([o.key, o.label])) {
      if (name === '') continue;
      byName.set(name, [...(byName.get(name) ?? []), Object.freeze({ key: o.key, label: o.label })]);
    }
  }
  const names = [...byName].sort((a, b) => b[0].length - a[0].length);
  NAMES.set(options, names);
  return names;
}

/** Reads a value against a field's options, counting its steps. */
class ListReader {
  private steps = 0;
  exhausted = false;
  /** Every text naming an option (its key, its label), longest first, each with the options it names. */
  private readonly names: ReadonlyArray<readonly [string, readonly ChosenOption[]]>;

  constructor(options: ReadonlyArray<{ key: string; label: string }>) {
    this.names = optionNames(options);
  }

  /** The lists a JSON array of option names reads as (none when the value is no JSON array of texts). */
  json(value: string): ChosenOption[][] {
    // most values are no JSON at all, and a parse that throws costs more than the rest of the reading
    if (!JSON_ARRAY_START.test(value)) return [];
    let parsed: unknown;
    try {
      parsed = JSON.parse(value);
    } catch {
      return [];
    }
    if (!Array.isArray(parsed) || !parsed.every((item) => typeof item === 'string')) return [];
    let lists: ChosenOption[][] = [[]];
    for (const item of parsed as string[]) {
      const named = this.names.find(([name]) => name === item)?.[1] ?? [];
      lists = lists.flatMap((list) => named.filter((o) => !list.some((c) => c.key === o.key)).map((o) => [...list, o]));
      if (lists.length === 0) return [];
    }
    return lists;
  }

  /** The lists of options, named one after another with `separator` between them, that the whole value reads as. */
  *joined(value: string, separator: string, from = 0, chosen: ChosenOption[] = []): Generator<ChosenOption[]> {
    for (const [name, named] of this.names) {
      if (++this.steps > STEP_BUDGET) {
        this.exhausted = true;
        return;
      }
      if (!value.startsWith(name, from)) continue;
      const end = from + name.length;
      for (const option of named) {
        if (chosen.some((c) => c.key === option.key)) continue;
        const list = [...chosen, option];
        if (end === value.length) {
          yield list;
          continue;
        }
        for (const next of afterSeparator(value, end, separator)) yield* this.joined(value, separator, next, list);
      }
    }
  }
}

/** Where the next option may start after `separator` at `at` (spaces before and after it allowed, any number). */
function afterSeparator(value: string, at: number, separator: string): number[] {
  let p = at;
  while (value[p] === ' ') p++;
  if (!value.startsWith(separator, p)) return [];
  const starts: number[] = [];
  let q = p + separator.length;
  starts.push(q);
  while (value[q] === ' ') starts.push(++q);
  return starts;
}
