import { z } from 'zod';
import type { Destination } from '../load/destination.js';
import type { LoyaltyApi } from '../source/loyalty-api.js';
import { FatalSourceError } from '../source/source-errors.js';
import { withoutNul } from '../transform/values.js';

const int = z.union([z.number(), z.string().regex(/^-?\d+$/)]).transform(Number);
const profileListSchema = z.array(z.looseObject({ id: int, label: z.string().nullish(), main: z.boolean().nullish(), used: z.boolean().nullish() }));
const fieldSchema = z.looseObject({
  id: int,
  name: z.string(),
  label: z.string().nullish(),
  typeId: int.nullish(),
  renderType: int.nullish(),
  orderValue: int.nullish(),
  required: z.boolean().nullish(),
  multiple: z.boolean().nullish(),
  isBusiness: z.boolean().nullish(),
  columnNumber: z.string().nullish(),
  format: z.string().nullish(),
  defaultValue: z.string().nullish(),
  options: z.array(z.unknown()).nullish(),
});
const profileSchema = z.looseObject({ id: int, mainProfileId: int.nullish(), createdBy: int.nullish(), profileFields: z.array(fieldSchema).default([]) });

/**
 * Reference data: replaces `profiles` and `profile_fields` with what the source lists now (endpoints 10 and
 * 11), in one transaction. `profile_fields.name` is the custom field's key, so
 * `_etl_columns.source_key = profile_fields.name` tells the label and type code behind each `cf_` column.
 * Both responses are read without NUL characters, which PostgreSQL's text cannot hold, as custom-field keys
 * are: a field's name still matches its column's `source_key`.
 */
export async function refreshProfiles(api: LoyaltyApi, destination: Destination, runId: string): Promise<{ profiles: number; fields: number }> {
  const list = profileListSchema.safeParse(withoutNul(await api.profiles()));
  if (!list.success) throw new FatalSourceError(`profiles: unexpected response shape: ${list.error.issues[0]!.message}`, 'profiles');
  const details: Array<{ summary: z.infer<typeof profileListSchema>[number]; detail: z.infer<typeof profileSchema> }> = [];
  for (const p of list.data) {
    const parsed = profileSchema.safeParse(withoutNul(await api.profile(p.id)));
    if (!parsed.success) throw new FatalSourceError(`profile ${p.id}: unexpected response shape at ${parsed.error.issues[0]!.path.join('.')}: ${parsed.error.issues[0]!.message}`, `profile ${p.id}`);
    details.push({ summary: p, detail: parsed.data });
  }
  const loadedAt = new Date().toISOString();
  let fields = 0;
  await destination.withConnection((conn) =>
    conn.transaction(async () => {
      await conn.run(`DELETE FROM ${conn.schemaSql}.profile_fields`);
      await conn.run(`DELETE FROM ${conn.schemaSql}.profiles`);
      for (const { summary, detail } of details) {
        await conn.run(
          `INSERT INTO ${conn.schemaSql}.profiles (profile_id, label, main, used, main_profile_id, created_by, _run_id, _loaded_at) VALUES ($1, $2, $3, $4, $5, $6, $7, CAST($8 AS TIMESTAMPTZ))`,
          [summary.id, summary.label ?? null, summary.main ?? null, summary.used ?? null, detail.mainProfileId ?? null, detail.createdBy ?? null, runId, loadedAt],
        );
        const seen = new Set<number>();
        for (const f of detail.profileFields) {
          if (seen.has(f.id)) continue;
          seen.add(f.id);
          fields++;
          await conn.run(
            `INSERT INTO ${conn.schemaSql}.profile_fields (profile_id, field_id, name, label, type_id, render_type, order_value, required, multiple, is_business, column_number, format, default_value, options, definition, _run_id, _loaded_at)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, CAST($17 AS TIMESTAMPTZ))`,
            [
              summary.id,
              f.id,
              f.name,
              f.label ?? null,
              f.typeId ?? null,
              f.renderType ?? null,
              f.orderValue ?? null,
              f.required ?? null,
              f.multiple ?? null,
              f.isBusiness ?? null,
              f.columnNumber ?? null,
              f.format ?? null,
              f.defaultValue ?? null,
              f.options ? JSON.stringify(f.options) : null,
              JSON.stringify(f),
              runId,
              loadedAt,
            ],
          );
        }
      }
    }),
  );
  return { profiles: details.length, fields };
}
