import { stringify } from 'yaml';
import type { DescribedRelation } from '../load/catalog/table-comments.js';
import { NEVER_FOR_ANALYSTS } from '../load/catalog/warehouse-catalog.js';
import { analystNote, analystType, isPipelineRelation } from '../load/derived/personal-data.js';

/** Where the described tables are read from, for the catalog's header and dbt's `schema`. */
export interface CatalogTarget {
  /** `duckdb` (analysts read the published copy) or `postgres` (the analysts' schema of views). */
  warehouse: 'duckdb' | 'postgres';
  /** The schema analysts read: DuckDB's schema in the copy, PostgreSQL's analysts schema. */
  schema: string;
  /** What analysts read, in words: `the published DuckDB copy`, `` the PostgreSQL schema `x` ``. */
  words: string;
  /** What analysts read of personal data. */
  personalData: 'keep' | 'hash' | 'drop';
  /** Whether analysts read the pipeline's own `_etl_` tables too (`destination.analysts.pipeline_tables`). */
  pipelineTables?: boolean;
}

/**
 * The tables a catalog lists, as analysts read them: every table and view of the data (the pipeline's own `_etl_`
 * ones only when `pipeline_tables` is set; its secrets never), each personal column with the type
 * and description it has there (a hash is text, whatever the warehouse's type).
 */
export function listed(relations: readonly DescribedRelation[], target: CatalogTarget): DescribedRelation[] {
  const policy = { personalData: target.personalData };
  const text = target.warehouse === 'duckdb' ? 'VARCHAR' : 'text';
  return relations
    .filter((r) => !NEVER_FOR_ANALYSTS.has(r.name) && (target.pipelineTables === true || !isPipelineRelation(r.name)))
    .map((r) => ({
      ...r,
      columns: r.columns.map((c) => {
        const note = analystNote(policy, r.name, c.name);
        return {
          ...c,
          type: analystType(policy, r.name, c.name, c.type, text),
          ...(note && c.description !== undefined ? { description: c.description + note } : {}),
        };
      }),
    }));
}

/** The dbt source's name. */
export const DBT_SOURCE = 'loyalty';

/**
 * dbt sources (`version: 2`): one source, `loyalty`, in the schema analysts read, with every table and column and its
 * description; freshness from `_loaded_at` (dbt 1.10's `config:` form), off for tables without it; `not_null` on each
 * key column, `unique` on a single-column key, and a table-level `unique` on the key's columns joined for a composite
 * one (dbt's own generic tests: no package needed).
 */
export function dbtSources(relations: readonly DescribedRelation[], target: CatalogTarget): string {
  const tables = listed(relations, target).map((r) => {
    const loaded = r.columns.some((c) => c.name === '_loaded_at');
    const composite = r.key.length > 1;
    return {
      name: r.name,
      description: r.description ?? '',
      ...(composite
        ? {
            data_tests: [
              { unique: { column_name: r.key.map((k) => `coalesce(cast(${k} as varchar), '')`).join(" || '|' || ") } },
            ],
          }
        : {}),
      ...(loaded ? {} : { config: { freshness: null } }),
      columns: r.columns.map((c) => ({
        name: c.name,
        description: c.description ?? '',
        data_type: c.type,
        ...(r.key.includes(c.name) ? { data_tests: composite ? ['not_null'] : ['unique', 'not_null'] } : {}),
      })),
    };
  });
  const doc = {
    version: 2,
    sources: [
      {
        name: DBT_SOURCE,
        description: `The loyalty program's data as loyalty-etl loads it (${target.warehouse}; personal data: ${target.personalData}).`,
        schema: target.schema,
        config: {
          loaded_at_field: '_loaded_at',
          freshness: { warn_after: { count: 30, period: 'hour' }, error_after: { count: 54, period: 'hour' } },
        },
        tables,
      },
    ],
  };
  return stringify(doc, { lineWidth: 0 });
}

/** A data dictionary page in Markdown: every table, its key and description, and a table of its columns. */
export function dataDictionary(relations: readonly DescribedRelation[], target: CatalogTarget): string {
  const cell = (text: string) => text.replaceAll('|', '\\|').replaceAll('\n', ' ');
  const lines = [
    '# Data dictionary',
    '',
    `Every table and view analysts read (${target.words}), written by \`loyalty-etl catalog --format markdown\` from the comments the warehouse carries. Personal data (phone, e-mail, names, birthdate): ${target.personalData}.`,
    '',
  ];
  for (const r of listed(relations, target)) {
    lines.push(`## \`${r.name}\`${r.kind === 'view' ? ' (view)' : ''}`, '', r.description ?? '', '');
    if (r.key.length > 0) lines.push(`Key: ${r.key.map((k) => `\`${k}\``).join(', ')}`, '');
    lines.push('| column | type | description |', '|---|---|---|');
    for (const c of r.columns) lines.push(`| \`${cell(c.name)}\` | ${cell(c.type)} | ${cell(c.description ?? '')} |`);
    lines.push('');
  }
  return lines.join('\n');
}

/** The catalog as JSON: the target and every table with its kind, key, description and columns. */
export function jsonCatalog(relations: readonly DescribedRelation[], target: CatalogTarget): string {
  const tables = listed(relations, target).map((r) => ({
    name: r.name,
    kind: r.kind,
    description: r.description ?? null,
    key: r.key,
    columns: r.columns.map((c) => ({ name: c.name, type: c.type, description: c.description ?? null })),
  }));
  return `${JSON.stringify({ ...target, tables }, null, 2)}\n`;
}
