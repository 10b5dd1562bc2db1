import { z } from 'zod';
import { readAllPages } from '../extract/paged-listing.js';
import { dayOfMillis } from '../plan/days.js';
import { UNLISTED_COLUMN, type Row, type TableSpec } from '../load/table-spec.js';
import { type ChoiceListForm, type FieldDefinitions, optionLabel, readChoiceList } from '../transform/choice-lists.js';
import { FIELD_REJECTS, LenientFields } from '../transform/field-problems.js';
import { RecordError } from '../transform/record-error.js';
import { UNLISTED, unlistedJson, unlistedMembers } from '../transform/unlisted.js';
import { stagedObject } from '../transform/values.js';
import type { NormalizedRecord, StreamContext, StreamDefinition } from './stream.js';
import { customerIdSchema, readCustomerId, withCustomerId } from './customer-id.js';
import { listingSpanWindows } from './listing-span.js';
import { sourceMap } from './source-map.js';

const text = z.union([z.string(), z.number(), z.null()]).optional();

/** A business account record of `GET /business-data/accounts` (spec: "Business account record"). */
export const accountRecordSchema = z.looseObject({
  customerId: customerIdSchema,
  phone: text,
  email: text,
  first: text,
  last: text,
  birthdate: text,
  source: text,
  profileSet: text,
  country: text,
  customerSince: text,
  memberSince: text,
  nationality: text,
  gender: text,
  city: text,
  language: text,
  customFieldMap: sourceMap(z.union([z.string(), z.number(), z.boolean(), z.null()])).nullish(),
});

/** The members of an account export record the spec lists, and `accountId`, read as `customerId` (see `withCustomerId`). */
export const ACCOUNT_MEMBERS: ReadonlySet<string> = new Set([...Object.keys(accountRecordSchema.shape), 'accountId']);

/** The staging-only column of `accounts` that holds a record's custom fields, `{name: text | null}`. */
const CUSTOM_FIELDS = '_custom_fields';
/**
 * The staging-only column of `accounts` that holds the record's rows of `account_custom_fields`: a JSON array of
 * `[field_name, position, value, label]`, one per option of a multiple-choice field, one per other field.
 */
const CUSTOM_FIELD_ROWS = '_custom_field_rows';
/** The staging-only column of `accounts` that holds the day (in the job's zone) its `profileSet` names. */
const SET_ON = '_set_on';

export const accountsTable: TableSpec = {
  name: 'accounts',
  key: ['customer_id'],
  // an export listing a customer once per change: the last change of a window wins, whatever order it was listed in
  merge: { kind: 'latest-wins', order: 'profile_set_at' },
  pivot: { prefix: 'cf_', column: CUSTOM_FIELDS, child: 'account_custom_fields' },
  // new values of fields profile_fields types are read as their type (accounts_typed)
  derived: 'typed-fields',
  columns: [
    { name: 'customer_id', type: 'text' },
    { name: 'phone', type: 'text' },
    { name: 'email', type: 'text' },
    { name: 'first_name', type: 'text' },
    { name: 'last_name', type: 'text' },
    { name: 'birthdate', type: 'date' },
    { name: 'source', type: 'text' },
    { name: 'profile_set_at', type: 'timestamptz' },
    { name: 'country', type: 'text' },
    { name: 'customer_since', type: 'timestamptz' },
    { name: 'member_since', type: 'timestamptz' },
    { name: 'nationality', type: 'text' },
    { name: 'gender', type: 'text' },
    { name: 'city', type: 'text' },
    { name: 'language', type: 'text' },
    UNLISTED_COLUMN,
  ],
  recordType: 'account',
  // the record's custom fields, `{name: value | null}`, which the `cf_` columns read, and its rows of `account_custom_fields`
  stagingOnly: [
    { name: CUSTOM_FIELDS, type: 'json' },
    { name: CUSTOM_FIELD_ROWS, type: 'json' },
    { name: SET_ON, type: 'date' },
  ],
  // a version per change the export served: the window that first served it starts it, never before its profileSet day
  history: {
    table: 'accounts_history',
    observations: '_etl_accounts_observations',
    observedAt: '_window_start',
    objects: [{ staged: CUSTOM_FIELDS, column: 'custom_fields' }],
    notBefore: SET_ON,
  },
};

/**
 * The custom fields long: one row per field, at `position` 1, except that a multiple-choice field has one row per
 * option its value names (positions 1, 2, … in the value's order), `value` the option's key; `label` is a choice
 * field's option label.
 */
export const accountCustomFieldsTable: TableSpec = {
  name: 'account_custom_fields',
  key: ['customer_id', 'field_name', 'position'],
  merge: { kind: 'children', parent: 'accounts', parentKey: ['customer_id'] },
  stagedWith: { table: 'accounts', kind: 'rows', column: CUSTOM_FIELD_ROWS },
  columns: [
    { name: 'customer_id', type: 'text' },
    { name: 'field_name', type: 'text' },
    { name: 'position', type: 'integer' },
    { name: 'value', type: 'text' },
    { name: 'label', type: 'text' },
  ],
};

/**
 * Which customers were seen in which window: the change signal of the export, kept after `accounts` has moved
 * on to a later version. The postings selection `changed` reads it.
 */
export const accountWindowsTable: TableSpec = {
  name: '_etl_account_windows',
  key: ['customer_id', '_window_start'],
  merge: { kind: 'replace-window' },
  stagedWith: { table: 'accounts', kind: 'copy' },
  columns: [{ name: 'customer_id', type: 'text' }],
};

/**
 * Turns one account export record into its `accounts` row, which carries its custom fields (the rows of
 * `account_custom_fields` and the values of the `cf_` columns) as a JSON object in `_custom_fields`.
 * Timestamps become UTC (zone-less ones read in `timezone`); `NULL`, empty and null become null. A record that is
 * no object, or has no `customerId` to key it on, is rejected; any other field that cannot be read loads as NULL
 * and is kept in `_etl_field_rejects` (a custom field that cannot be read is NULL under its name, a
 * `customFieldMap` that is no object is no custom fields).
 */
export function normalizeAccount(
  raw: unknown,
  timezone: string,
  choices: CustomFieldReading = NO_DEFINITIONS,
): NormalizedRecord {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) throw new RecordError('', 'record: not an object');
  const record = withCustomerId(raw) as Record<string, unknown>;
  // the key: a record without it is rejected, never loaded keyed on NULL
  if (record.customerId == null) throw new RecordError('customerId', 'is missing: accounts are keyed on it');
  const customerId = readCustomerId(record.customerId);
  const fields = new LenientFields(customerId);
  const ts = (field: string) => fields.timestamp(field, record[field], timezone);
  const text = (field: string) => fields.text(field, record[field]);
  const profileSetAt = ts('profileSet');
  const account = {
    customer_id: customerId,
    phone: text('phone'),
    email: text('email'),
    first_name: text('first'),
    last_name: text('last'),
    birthdate: fields.date('birthdate', record.birthdate),
    source: text('source'),
    profile_set_at: profileSetAt,
    country: text('country'),
    customer_since: ts('customerSince'),
    member_since: ts('memberSince'),
    nationality: text('nationality'),
    gender: text('gender'),
    city: text('city'),
    language: text('language'),
    [UNLISTED]: unlistedJson(unlistedMembers(raw, ACCOUNT_MEMBERS)),
    ...customFieldColumns(
      readCustomFields(fields, fields.namedTexts('customFieldMap', record.customFieldMap), choices),
    ),
    [SET_ON]: profileSetAt === null ? null : localDay(profileSetAt, timezone),
  };
  return fields.failed ? { accounts: [account], [FIELD_REJECTS]: fields.rows() } : { accounts: [account] };
}

/** How custom field values are read: the fields' definitions (`profile_fields`) and `source.multiple_choice`. */
export interface CustomFieldReading {
  definitions: FieldDefinitions;
  form: ChoiceListForm;
}

const NO_DEFINITIONS: CustomFieldReading = { definitions: new Map(), form: 'auto' };

/** A custom field as the warehouse holds it: its text (a multiple-choice field's, its option keys as a JSON array) and its options. */
interface ReadField {
  value: string | null;
  /** The options a multiple-choice field's value names; for any other field, its one value and label. */
  rows: Array<{ value: string | null; label: string | null }>;
}

/**
 * The record's custom fields read by their definitions (names cleaned, the last of a name repeated by cleaning wins):
 * a multiple-choice field's value is read as a list of its options (`readChoiceList`), and stands in `accounts` as
 * their keys in a JSON array (`["wine","kids"]`), whatever form the service sent them in; a value that cannot be read
 * as exactly one list is NULL and kept in `_etl_field_rejects`. A single-choice field's value keeps its text and gets
 * its option's label.
 */
function readCustomFields(
  fields: LenientFields,
  named: ReadonlyArray<readonly [string, string | null]>,
  { definitions, form }: CustomFieldReading,
): Map<string, ReadField> {
  const out = new Map<string, ReadField>();
  for (const [raw, text] of named) {
    const name = raw.toWellFormed();
    const value = text?.toWellFormed() ?? null;
    const definition = definitions.get(name);
    if (value === null || !definition || definition.options.length === 0) {
      out.set(name, { value, rows: [{ value, label: null }] });
    } else if (!definition.multiple) {
      out.set(name, { value, rows: [{ value, label: optionLabel(value, definition.options) }] });
    } else {
      const list = fields.read(`customFieldMap.${raw}`, text, () => {
        const read = readChoiceList(value, definition.options, form);
        if ('problem' in read) throw new RecordError(`customFieldMap.${raw}`, read.problem);
        return read.options;
      });
      out.set(
        name,
        list === null
          ? { value: null, rows: [{ value: null, label: null }] }
          : {
              value: JSON.stringify(list.map((o) => o.key)),
              // a field that names no option keeps its one row, as an empty field does
              rows:
                list.length === 0
                  ? [{ value: null, label: null }]
                  : list.map((o) => ({ value: o.key, label: o.label })),
            },
      );
    }
  }
  return out;
}

/** The staging-only columns of an `accounts` row that carry its custom fields. */
function customFieldColumns(fields: ReadonlyMap<string, ReadField>): Row {
  const rows: Array<[string, number, string | null, string | null]> = [];
  for (const [name, field] of fields) field.rows.forEach((r, i) => rows.push([name, i + 1, r.value, r.label]));
  return {
    [CUSTOM_FIELDS]: stagedObject([...fields].map(([name, field]) => [name, field.value] as const)),
    [CUSTOM_FIELD_ROWS]: JSON.stringify(rows),
  };
}

/** An `accounts` row as it is staged: with its custom fields (cleaned names and values, no definitions) beside it. */
export function withCustomFields(account: Row, fields: ReadonlyMap<string, string | null>): Row {
  return { ...account, ...customFieldColumns(readCustomFields(new LenientFields(), [...fields], NO_DEFINITIONS)) };
}

/** The key of an export record: its `customerId` (or `accountId`) when it is text (a malformed record may have none). */
function customerIdOf(record: unknown): string | undefined {
  const named = record as { customerId?: unknown; accountId?: unknown } | null;
  const id = named?.customerId ?? named?.accountId;
  return typeof id === 'string' ? id : undefined;
}

/**
 * The accounts stream: every page of each window's export, the latest window's version wins. A customer appears
 * once per window, so a `customerId` read twice proves records moved between pages. A span holds consecutive
 * windows up to 31 days ({@link listingSpanWindows}), read in order, so within a span too the later window's version
 * (the later occurrence) wins.
 */
export const accountsStream: StreamDefinition = {
  name: 'accounts',
  tables: [accountsTable, accountCustomFieldsTable, accountWindowsTable],
  maxWindowsPerSpan: listingSpanWindows,
  lanes: (concurrency) => concurrency,
  async *extract(ctx: StreamContext, span) {
    for (const window of span) {
      const pages = readAllPages({
        label: `accounts ${window.start}..${window.end}`,
        pageSize: ctx.pageSize,
        fetchPage: (n) => ctx.api.accountsPage(window, n, ctx.pageSize),
        keyOf: customerIdOf,
        concurrency: ctx.concurrency,
      });
      for await (const page of pages)
        yield { windowStart: window.start, records: page.records, restart: page.restart, reason: page.reason };
      yield { windowStart: window.start, records: [], restart: false, windowComplete: true };
    }
  },
  countRange: async (api, range) => (await api.accountsPage(range, 1, 1)).totalCount,
  // a multiple-choice field's value is read by its definition: the pipeline reads `profile_fields` for the span
  fieldDefinitions: true,
  normalizer: (ctx) => {
    const reading = { definitions: ctx.fieldDefinitions ?? new Map(), form: ctx.choiceLists ?? 'auto' };
    return (raw) => normalizeAccount(raw, ctx.timezone, reading);
  },
};

/**
 * The day, in `timezone`, of the instant `instant` (ISO UTC, as timestamps are read), as a day both warehouses hold:
 * an instant at the edge of the calendar (9999-12-31 23:59:59 UTC) falls outside years 1 to 9999 in some zones,
 * where such a day is the calendar's first or last ({@link dayOfMillis}).
 */
function localDay(instant: string, timezone: string): string {
  return dayOfMillis(Date.parse(instant), timezone);
}
