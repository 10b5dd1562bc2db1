import { readFieldOptions, type FieldDefinition, type FieldDefinitions } from '../../transform/choice-lists.js';
import type { SqlConnection } from '../warehouse/sql-connection.js';

/**
 * The custom fields' definitions as `profile_fields` holds them, by name: whether a field takes several options and
 * its options (`[{key, value}]`; an option without a text key or label is left out). A name several profiles define
 * takes the definition of the main profile, then of a used one, then of the lowest profile id, as its typed column
 * does (`typed-fields.ts`). Read at the start of an accounts span: the refresh of the run's start has committed.
 */
export async function readFieldDefinitions(conn: SqlConnection): Promise<FieldDefinitions> {
  const rows = await conn.all<{ name: string | null; multiple: boolean | null; options: string | null }>(
    `SELECT f.name, f.multiple, CAST(f.options AS VARCHAR) AS options
       FROM ${conn.schemaSql}."profile_fields" f
       LEFT JOIN ${conn.schemaSql}."profiles" p ON p.profile_id = f.profile_id
      ORDER BY f.name, CASE WHEN p.main THEN 0 ELSE 1 END, CASE WHEN p.used THEN 0 ELSE 1 END, f.profile_id, f.field_id`,
  );
  const out = new Map<string, FieldDefinition>();
  for (const r of rows) {
    if (r.name === null || out.has(r.name)) continue;
    out.set(r.name, { multiple: r.multiple === true, options: readFieldOptions(r.options) });
  }
  return out;
}
