import type { AnalystsPolicy } from '../../plan/job-plan.js';
import { PERSONAL_COLUMNS, PERSONAL_PAYLOADS } from '../catalog/warehouse-catalog.js';
import type { WarehouseDialect } from '../warehouse/warehouse-dialect.js';
import { SCHEMA_CHANGES_TABLE } from './schema-contract.js';

/** The prefix of the pipeline's own tables and views: its bookkeeping, not data analysts read. */
export const PIPELINE_PREFIX = '_etl_';

/**
 * The pipeline's tables written for analysts: the record of what changed of the tables and views they read is where
 * they look for it, whatever `pipeline_tables` says.
 */
const WRITTEN_FOR_ANALYSTS: ReadonlySet<string> = new Set([SCHEMA_CHANGES_TABLE]);

/** Whether `relation` is one of the pipeline's own tables or views (`_etl_…`), but for those written for analysts. */
export function isPipelineRelation(relation: string): boolean {
  return relation.startsWith(PIPELINE_PREFIX) && !WRITTEN_FOR_ANALYSTS.has(relation);
}

/** Whether analysts read `column` of `table` other than as it is under `policy`. */
export function isWithheld(policy: AnalystsPolicy, table: string, column: string): boolean {
  return policy.personalData !== 'keep' && (PERSONAL_COLUMNS.has(column) || isPayload(table, column));
}

/** A column that holds what the service sent as it sent it: named alone, or as `table.column` where only one table's is. */
function isPayload(table: string, column: string): boolean {
  return PERSONAL_PAYLOADS.has(column) || PERSONAL_PAYLOADS.has(`${table}.${column}`);
}

/**
 * What analysts read of the column `column` of `table` (the expression `value`) under `policy`, where `key` is an expression of
 * the hashing key: itself under `keep` and for columns of no personal data; under `hash`, SHA-256 of the key, `:` and
 * the value as text (64 hex digits, NULL stays NULL, the same value gives the same hash in every table, so joins on
 * phone or e-mail still work); under `drop`, NULL. A JSON column holding whole records (`payload`) is NULL under
 * both, as its personal data cannot be told apart.
 *
 * @example
 * analystValue(duckdbDialect, { personalData: 'hash' }, 'accounts', 'phone', 'r."phone"', '$1') // sha256($1 || ':' || CAST(r."phone" AS VARCHAR))
 */
export function analystValue(
  dialect: WarehouseDialect,
  policy: AnalystsPolicy,
  table: string,
  column: string,
  value: string,
  key: string,
): string {
  if (!isWithheld(policy, table, column)) return value;
  // NULL of the column's own type: the column keeps its type
  if (policy.personalData === 'drop' || isPayload(table, column)) return `CASE WHEN FALSE THEN ${value} END`;
  return dialect.sha256(`${key} || ':' || CAST(${value} AS ${dialect.typeName('text')})`);
}

/**
 * What a column's description says of it where analysts read it under `policy`: nothing for a column they read as
 * loaded; else whether it holds a hash (text, whatever the column's type in the warehouse) or NULL.
 */
export function analystNote(policy: AnalystsPolicy, table: string, column: string): string {
  if (!isWithheld(policy, table, column)) return '';
  if (policy.personalData === 'drop' || isPayload(table, column))
    return ' Here: NULL, by destination.analysts.personal_data.';
  return ' Here: SHA-256 of the salted value as text (64 hex digits), by destination.analysts.personal_data.';
}

/**
 * The type analysts read a column of `type` (the warehouse's name for it) as under `policy`: a hashed column is
 * text (`textType`) whatever it is in the warehouse (a birthdate's hash is no DATE); any other keeps its type.
 */
export function analystType(
  policy: AnalystsPolicy,
  table: string,
  column: string,
  type: string,
  textType: string,
): string {
  if (!isWithheld(policy, table, column) || policy.personalData !== 'hash' || isPayload(table, column)) return type;
  return /^(VARCHAR|TEXT|JSON|JSONB|CHARACTER VARYING)$/i.test(type) ? type : textType;
}
