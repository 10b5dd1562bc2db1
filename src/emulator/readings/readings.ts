/**
 * Readings of what the spec leaves open ("not shown"): each member picks one way a real service could answer,
 * so a client can be tested against all of them. Every member is optional; the default is the emulator's own
 * reading. A reading changes only how data is served, never the data: the ground truth is the same whatever
 * the readings.
 */
export interface EmulatorReadings {
  /**
   * HTTP status sent with every 1xxx error: `'mapped'` (default: 1005 → 404; 1002, 1006, 1010 → 400; 1004 → 409)
   * or one status for all of them.
   */
  errorStatus?: 'mapped' | 200 | 400 | 404 | 500;
  /**
   * Shape of every error body: `'code-message'` (default, `{"code":1005,"message":"Data Not Found"}`), `'nested'`
   * (`{"error":{"code":1005,"message":…}}`), `'status-fields'` (`{"status":"error","errorCode":"1005","errorMessage":…}`)
   * or `'text'` (text/plain `1005 Data Not Found`).
   */
  errorBody?: 'code-message' | 'nested' | 'status-fields' | 'text';
  /** Whether an export's `end` day is included (default `'inclusive'`) or not (`'exclusive'`). */
  exportEnd?: 'inclusive' | 'exclusive';
  /**
   * What the accounts export lists: `'last-change'` (default: each customer changed in the window once, as of its
   * last change there), `'per-change'` (once per change in the window, each as of that change) or `'current'`
   * (each customer changed in the window once, with its current profile and `profileSet`, even for a past window).
   */
  accountsListing?: 'last-change' | 'per-change' | 'current';
  /** Number of the first page of every listing. Default 1. */
  firstPage?: 0 | 1;
  /**
   * `null` (default): a `size` over `maxPageSize` gets 400. A number N: a larger `size` is silently served N
   * records a page, and the answer's `pageSize` says N.
   */
  pageSizeCap?: number | null;
  /** `'strings'`: the numbers and booleans of every record are sent as JSON strings. Default `'typed'`. */
  scalars?: 'typed' | 'strings';
  /**
   * Zone labels of the timestamps of accounts, surveys and the loyalty state: `'utc'` (default: ` UTC` or
   * zone-less local time), `'abbreviations'` (EET, EEST, CET, CEST, BST, GMT, …) or `'offsets'` (`+02:00`, `+0200`, `Z`).
   */
  zoneLabels?: 'utc' | 'abbreviations' | 'offsets';
  /** Records carry members the spec does not list (`UNLISTED_FIELDS`). Default false. */
  unlistedFields?: boolean;
  /** `'unstable'`: the order of a listing's records changes between two page requests of it. Default `'stable'`. */
  listingOrder?: 'stable' | 'unstable';
  /** `'sample'`: where the spec's samples and tables name a field differently, the samples' name. Default `'tables'`. */
  fieldNames?: 'tables' | 'sample';
  /**
   * How the options of a multiple-choice custom field travel in its one string: their keys joined by `,` (default
   * `'comma'`), `;` (`'semicolon'`) or `|` (`'pipe'`), a JSON array of keys (`'json'`), or their labels joined by `, `
   * (`'labels'`).
   */
  choiceLists?: 'comma' | 'semicolon' | 'pipe' | 'json' | 'labels';
  /**
   * How a missing text is spelled where the emulator writes the text `NULL`: `'NULL'` (default) or `'varied'`
   * (`null`, ` Null `, `NULL` and a tab, `nULL`: other cases, spaces around), as a service may spell "the text NULL".
   */
  missingText?: 'NULL' | 'varied';
}

/** {@link EmulatorReadings} with every default filled in. */
export type ResolvedReadings = Required<EmulatorReadings>;

/** Today's behaviour: the reading of every convention when none is asked for. */
export const DEFAULT_READINGS: ResolvedReadings = Object.freeze({
  errorStatus: 'mapped',
  errorBody: 'code-message',
  exportEnd: 'inclusive',
  accountsListing: 'last-change',
  firstPage: 1,
  pageSizeCap: null,
  scalars: 'typed',
  zoneLabels: 'utc',
  unlistedFields: false,
  listingOrder: 'stable',
  fieldNames: 'tables',
  choiceLists: 'comma',
  missingText: 'NULL',
});

const CHOICES: { [K in keyof ResolvedReadings]: readonly ResolvedReadings[K][] | 'cap' } = {
  errorStatus: ['mapped', 200, 400, 404, 500],
  errorBody: ['code-message', 'nested', 'status-fields', 'text'],
  exportEnd: ['inclusive', 'exclusive'],
  accountsListing: ['last-change', 'per-change', 'current'],
  firstPage: [1, 0],
  pageSizeCap: 'cap',
  scalars: ['typed', 'strings'],
  zoneLabels: ['utc', 'abbreviations', 'offsets'],
  unlistedFields: [false, true],
  listingOrder: ['stable', 'unstable'],
  fieldNames: ['tables', 'sample'],
  choiceLists: ['comma', 'semicolon', 'pipe', 'json', 'labels'],
  missingText: ['NULL', 'varied'],
};

/** The names of every reading, in documentation order. */
export const READING_NAMES = Object.keys(CHOICES) as Array<keyof ResolvedReadings>;

/** Fills in defaults and checks each reading, throwing a RangeError that names a bad one. */
export function resolveReadings(readings: EmulatorReadings = {}): ResolvedReadings {
  const resolved: Record<string, unknown> = { ...DEFAULT_READINGS };
  for (const [name, value] of Object.entries(readings)) {
    if (value === undefined) continue;
    const choices = CHOICES[name as keyof ResolvedReadings];
    if (choices === undefined) throw new RangeError(`unknown reading "${name}" (known: ${READING_NAMES.join(', ')})`);
    if (choices === 'cap') {
      if (value !== null && !(Number.isInteger(value) && (value as number) >= 1))
        throw new RangeError(`readings.${name} must be null or a positive integer`);
    } else if (!(choices as readonly unknown[]).includes(value)) {
      throw new RangeError(
        `readings.${name} must be one of ${choices.map((c) => JSON.stringify(c)).join(', ')}, got ${JSON.stringify(value)}`,
      );
    }
    resolved[name] = value;
  }
  return resolved as ResolvedReadings;
}

/**
 * Readings from `key=value` texts (the `--reading` flag): numbers and `true`/`false`/`null` are read as such.
 *
 * @example parseReadings(['errorStatus=200', 'errorBody=nested']) // { errorStatus: 200, errorBody: 'nested' }
 */
export function parseReadings(texts: readonly string[]): EmulatorReadings {
  const readings: Record<string, unknown> = {};
  for (const text of texts) {
    const match = /^([A-Za-z]+)=(.+)$/.exec(text);
    if (!match) throw new RangeError(`reading "${text}" is not key=value (e.g. errorStatus=200)`);
    const [, name, raw] = match as unknown as [string, string, string];
    if (!(READING_NAMES as string[]).includes(name))
      throw new RangeError(`unknown reading "${name}" (known: ${READING_NAMES.join(', ')})`);
    readings[name] = /^\d+$/.test(raw)
      ? Number(raw)
      : raw === 'true'
        ? true
        : raw === 'false'
          ? false
          : raw === 'null'
            ? null
            : raw;
  }
  resolveReadings(readings as EmulatorReadings);
  return readings as EmulatorReadings;
}
