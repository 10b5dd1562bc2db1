import { z } from 'zod';
import type { Row, TableSpec } from '../load/table-spec.js';
import type { LoyaltyApi } from '../source/loyalty-api.js';
import { FatalSourceError } from '../source/source-errors.js';
import { cleanBoolean, storableJson } from '../transform/values.js';

const int = z.union([z.number(), z.string().regex(/^-?\d+$/)]).transform(Number);
/** A Boolean, sent as JSON true/false or as text (`"true"`, `"0"`); null when missing. */
const bool = z
  .union([z.boolean(), z.string(), z.null()])
  .optional()
  .transform((value, ctx) => {
    try {
      const text = cleanBoolean(value);
      return text === null ? null : text === 'true';
    } catch (error) {
      ctx.addIssue({ code: 'custom', message: (error as Error).message.replace(/^: /, '') });
      return z.NEVER;
    }
  });
const profileListSchema = z.array(z.looseObject({ id: int, label: z.string().nullish(), main: bool, used: bool }));
const fieldSchema = z.looseObject({
  id: int,
  name: z.string(),
  label: z.string().nullish(),
  typeId: int.nullish(),
  renderType: int.nullish(),
  orderValue: int.nullish(),
  required: bool,
  multiple: bool,
  isBusiness: bool,
  columnNumber: z.string().nullish(),
  format: z.string().nullish(),
  defaultValue: z.string().nullish(),
  options: z.array(z.unknown()).nullish(),
});
const profileSchema = z.looseObject({
  id: int,
  mainProfileId: int.nullish(),
  createdBy: int.nullish(),
  profileFields: z.array(fieldSchema).default([]),
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

/** A flag as staged: the loader casts the text. */
const flag = (b: boolean | null) => (b === null ? null : String(b));

/**
 * Reference data: what the source lists now of `profiles` and `profile_fields` (endpoints 10 and 11), as rows
 * to replace both tables with. `profile_fields.name` is the custom field's key, so
 * `_etl_columns.source_key = profile_fields.name` tells the label and type code behind each `cf_` column.
 * Both responses are read without NUL characters, which PostgreSQL's text cannot hold, as custom-field keys
 * are: a field's name still matches its column's `source_key`.
 */
export async function readProfiles(api: LoyaltyApi): Promise<{ profiles: Row[]; profile_fields: Row[] }> {
  const list = profileListSchema.safeParse(storableJson(await api.profiles()));
  if (!list.success)
    throw new FatalSourceError(`profiles: unexpected response shape: ${list.error.issues[0]!.message}`, 'profiles');
  const profiles: Row[] = [];
  const fields: Row[] = [];
  for (const summary of list.data) {
    const parsed = profileSchema.safeParse(storableJson(await api.profile(summary.id)));
    if (!parsed.success)
      throw new FatalSourceError(
        `profile ${summary.id}: unexpected response shape at ${parsed.error.issues[0]!.path.join('.')}: ${parsed.error.issues[0]!.message}`,
        `profile ${summary.id}`,
      );
    const detail = parsed.data;
    profiles.push({
      profile_id: summary.id,
      label: summary.label ?? null,
      main: flag(summary.main),
      used: flag(summary.used),
      main_profile_id: detail.mainProfileId ?? null,
      created_by: detail.createdBy ?? null,
    });
    const seen = new Set<number>();
    for (const f of detail.profileFields) {
      if (seen.has(f.id)) continue;
      seen.add(f.id);
      fields.push({
        profile_id: summary.id,
        field_id: f.id,
        name: f.name,
        label: f.label ?? null,
        type_id: f.typeId ?? null,
        render_type: f.renderType ?? null,
        order_value: f.orderValue ?? null,
        required: flag(f.required),
        multiple: flag(f.multiple),
        is_business: flag(f.isBusiness),
        column_number: f.columnNumber ?? null,
        format: f.format ?? null,
        default_value: f.defaultValue ?? null,
        options: f.options ? JSON.stringify(f.options) : null,
        definition: JSON.stringify(f),
      });
    }
  }
  return { profiles, profile_fields: fields };
}
