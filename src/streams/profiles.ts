import { z } from 'zod';
import type { Row, TableSpec } from '../load/table-spec.js';
import type { LoyaltyApi } from '../source/loyalty-api.js';
import { FatalSourceError } from '../source/source-errors.js';
import { LenientFields, type FieldRejectRow } from '../transform/field-problems.js';
import { RecordError } from '../transform/record-error.js';
import { storableJson } from '../transform/values.js';

const int = z.union([z.number(), z.string().regex(/^-?\d+$/)]).transform(Number);
/**
 * What keys reference data and names its custom fields: a profile's id, its fields' ids and names. Every other
 * member is read field by field.
 */
const profileListSchema = z.array(z.looseObject({ id: int }));
const profileSchema = z.looseObject({
  id: int,
  profileFields: z.array(z.looseObject({ id: int, name: z.string() })).nullish(),
});

export const profilesTable: TableSpec = {
  name: 'profiles',
  key: ['profile_id'],
  merge: { kind: 'replace-all' },
  windowless: true,
  columns: [
    { name: 'profile_id', type: 'integer' },
    { name: 'label', type: 'text' },
    { name: 'main', type: 'boolean' },
    { name: 'used', type: 'boolean' },
    { name: 'main_profile_id', type: 'integer' },
    { name: 'created_by', type: 'integer' },
  ],
};

export const profileFieldsTable: TableSpec = {
  name: 'profile_fields',
  key: ['profile_id', 'field_id'],
  merge: { kind: 'replace-all' },
  windowless: true,
  // a field's type or format may change: its values are read again
  derived: 'typed-fields',
  columns: [
    { name: 'profile_id', type: 'integer' },
    { name: 'field_id', type: 'integer' },
    { name: 'name', type: 'text' },
    { name: 'label', type: 'text' },
    { name: 'type_id', type: 'integer' },
    { name: 'render_type', type: 'integer' },
    { name: 'order_value', type: 'integer' },
    { name: 'required', type: 'boolean' },
    { name: 'multiple', type: 'boolean' },
    { name: 'is_business', type: 'boolean' },
    { name: 'column_number', type: 'text' },
    { name: 'format', type: 'text' },
    { name: 'default_value', type: 'text' },
    { name: 'options', type: 'json' },
    { name: 'definition', type: 'json' },
  ],
};

/** The tables reference data replaces whole on every refresh. */
export const PROFILE_TABLES: TableSpec[] = [profilesTable, profileFieldsTable];

/**
 * Reference data: what the source lists now of `profiles` and `profile_fields` (endpoints 10 and 11), as rows
 * to replace both tables with, and the fields that could not be read. `profile_fields.name` is the custom field's
 * key, so `_etl_columns.source_key = profile_fields.name` tells the label and type code behind each `cf_` column.
 * Both responses are read without NUL characters, which PostgreSQL's text cannot hold, as custom-field keys
 * are: a field's name still matches its column's `source_key`. A response whose ids or field names cannot be read
 * fails the refresh (the tables keep what they hold); any other member that cannot be read is NULL, its profile or field
 * kept, and the problem is one of `field_rejects` (record key `profile <id>` or `profile <id> field <id>`).
 */
export async function readProfiles(
  api: LoyaltyApi,
): Promise<{ profiles: Row[]; profile_fields: Row[]; field_rejects: FieldRejectRow[] }> {
  const list = profileListSchema.safeParse(storableJson(await api.profiles()));
  if (!list.success)
    throw new FatalSourceError(`profiles: unexpected response shape: ${list.error.issues[0]!.message}`, 'profiles');
  const profiles: Row[] = [];
  const fields: Row[] = [];
  const rejects: FieldRejectRow[] = [];
  for (const summary of list.data) {
    const parsed = profileSchema.safeParse(storableJson(await api.profile(summary.id)));
    if (!parsed.success)
      throw new FatalSourceError(
        `profile ${summary.id}: unexpected response shape at ${parsed.error.issues[0]!.path.join('.')}: ${parsed.error.issues[0]!.message}`,
        `profile ${summary.id}`,
      );
    const detail = parsed.data;
    const read = new LenientFields(`profile ${summary.id}`);
    profiles.push({
      profile_id: summary.id,
      label: servedText(read, 'label', summary.label),
      main: read.boolean('main', summary.main),
      used: read.boolean('used', summary.used),
      main_profile_id: read.integer('mainProfileId', detail.mainProfileId),
      created_by: read.integer('createdBy', detail.createdBy),
    });
    rejects.push(...read.rows());
    const seen = new Set<number>();
    for (const f of detail.profileFields ?? []) {
      if (seen.has(f.id)) continue;
      seen.add(f.id);
      const field = new LenientFields(`profile ${summary.id} field ${f.id}`);
      fields.push({
        profile_id: summary.id,
        field_id: f.id,
        name: f.name,
        label: servedText(field, 'label', f.label),
        type_id: field.integer('typeId', f.typeId),
        render_type: field.integer('renderType', f.renderType),
        order_value: field.integer('orderValue', f.orderValue),
        required: field.boolean('required', f.required),
        multiple: field.boolean('multiple', f.multiple),
        is_business: field.boolean('isBusiness', f.isBusiness),
        column_number: servedText(field, 'columnNumber', f.columnNumber),
        format: servedText(field, 'format', f.format),
        default_value: servedText(field, 'defaultValue', f.defaultValue),
        options: field.read('options', f.options, () => {
          if (f.options === null || f.options === undefined) return null;
          if (!Array.isArray(f.options)) throw new RecordError('options', 'expected a list of options');
          return JSON.stringify(f.options);
        }),
        // the definition as served
        definition: JSON.stringify(f),
      });
      rejects.push(...field.rows());
    }
  }
  return { profiles, profile_fields: fields, field_rejects: rejects };
}

/** A text member as the service sent it (no trimming, no `NULL` word): reference data names keys. */
function servedText(fields: LenientFields, name: string, raw: unknown): string | null {
  return fields.read(name, raw, () => {
    if (raw === null || raw === undefined) return null;
    if (typeof raw !== 'string') throw new RecordError(name, `expected text, got ${typeof raw}`);
    return raw;
  });
}
