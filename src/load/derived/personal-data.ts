import type { AnalystsPolicy } from '../../plan/job-plan.js';
import { PERSONAL_COLUMNS, PERSONAL_PAYLOADS } from '../catalog/warehouse-catalog.js';
import type { WarehouseDialect } from '../warehouse/warehouse-dialect.js';

/** Whether analysts read `column` other than as it is under `policy`. */
export function isWithheld(policy: AnalystsPolicy, column: string): boolean {
  return policy.personalData !== 'keep' && (PERSONAL_COLUMNS.has(column) || PERSONAL_PAYLOADS.has(column));
}

/**
 * What analysts read of the column `column` (the expression `value`) under `policy`, where `key` is an expression of
 * the hashing key: itself under `keep` and for columns of no personal data; under `hash`, SHA-256 of the key, `:` and
 * the value as text (64 hex digits, NULL stays NULL, the same value gives the same hash in every table, so joins on
 * phone or e-mail still work); under `drop`, NULL. A JSON column holding whole records (`payload`) is NULL under
 * both, as its personal data cannot be told apart.
 *
 * @example
 * analystValue(duckdbDialect, { personalData: 'hash' }, 'phone', 'r."phone"', '$1') // sha256($1 || ':' || CAST(r."phone" AS VARCHAR))
 */
export function analystValue(
  dialect: WarehouseDialect,
  policy: AnalystsPolicy,
  column: string,
  value: string,
  key: string,
): string {
  if (!isWithheld(policy, column)) return value;
  // NULL of the column's own type: the column keeps its type
  if (policy.personalData === 'drop' || PERSONAL_PAYLOADS.has(column)) return `CASE WHEN FALSE THEN ${value} END`;
  return dialect.sha256(`${key} || ':' || CAST(${value} AS ${dialect.typeName('text')})`);
}
