import { createHash } from 'node:crypto';
import type { AnalystsPolicy } from '../../plan/job-plan.js';
import { analystType, analystValue, isWithheld } from '../derived/personal-data.js';
import { quoteIdent } from '../warehouse/identifiers.js';
import type { SqlConnection } from '../warehouse/sql-connection.js';
import { duckdbDialect, postgresDialect } from '../warehouse/warehouse-dialect.js';

/** The session setting (PostgreSQL) or variable (DuckDB) the hashing key is held in while an export reads. */
const KEY_SETTING = { postgres: 'loyalty_etl.personal_data_key', duckdb: 'loyalty_etl_personal_data_key' } as const;

/** A fixed text hashed as a personal value would be: its hash in the manifest tells a later export the key changed. */
const KEY_CHECK_TEXT = 'loyalty-etl: the key this export was hashed with';

/** The table that holds the hashing key (PostgreSQL): never exported, whatever the policy. */
export const NEVER_EXPORTED: ReadonlySet<string> = new Set(['_etl_analysts']);

/**
 * The columns of `table` as the export writes them under `policy`: a hashed column is text (VARCHAR), whatever its
 * type in the warehouse; every other keeps its type.
 */
export function exportedColumns(
  policy: AnalystsPolicy,
  table: string,
  columns: ReadonlyArray<{ name: string; type: string }>,
): Array<{ name: string; type: string }> {
  return columns.map((c) => ({ name: c.name, type: analystType(policy, table, c.name, c.type, 'VARCHAR') }));
}

/**
 * The select list that reads `table` (alias `t`) as analysts may read it under `policy`, in the warehouse's SQL:
 * `*` where nothing is withheld, else each column, personal ones hashed or NULL (`personal-data.ts`). The key is
 * read from the session, where {@link holdKey} put it, so it is never part of a statement's text.
 */
export function exportSelectList(
  warehouse: 'duckdb' | 'postgres',
  policy: AnalystsPolicy,
  table: string,
  columns: ReadonlyArray<{ name: string }>,
): string {
  if (!columns.some((c) => isWithheld(policy, table, c.name))) return 't.*';
  const dialect = warehouse === 'duckdb' ? duckdbDialect : postgresDialect;
  const key =
    warehouse === 'duckdb' ? `getvariable('${KEY_SETTING.duckdb}')` : `current_setting('${KEY_SETTING.postgres}')`;
  return columns
    .map(
      (c) => `${analystValue(dialect, policy, table, c.name, `t.${quoteIdent(c.name)}`, key)} AS ${quoteIdent(c.name)}`,
    )
    .join(', ');
}

/** Puts the hashing key in the export's session (inside its transaction, on PostgreSQL), as a parameter. */
export async function holdKey(
  conn: Pick<SqlConnection, 'run'>,
  warehouse: 'duckdb' | 'postgres',
  policy: AnalystsPolicy,
): Promise<void> {
  if (policy.personalData !== 'hash') return;
  if (!policy.key) throw new Error('personal data is to be hashed, but no key was given');
  if (warehouse === 'duckdb') await conn.run(`SET VARIABLE ${KEY_SETTING.duckdb} = $1`, [policy.key]);
  else await conn.run(`SELECT set_config('${KEY_SETTING.postgres}', $1, true)`, [policy.key]);
}

/** What the manifest says of the key: the fixed text hashed under it (null but under `hash`); never the key. */
export function keyCheckOf(policy: AnalystsPolicy): string | null {
  if (policy.personalData !== 'hash' || !policy.key) return null;
  return createHash('sha256').update(`${policy.key}:${KEY_CHECK_TEXT}`).digest('hex');
}
