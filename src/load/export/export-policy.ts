import { createHash } from 'node:crypto';
import type { AnalystsPolicy } from '../../plan/job-plan.js';
import { analystType, analystValue, isWithheld } from '../derived/personal-data.js';
import { PII_KEY_TABLE } from '../derived/pii-key.js';
import { qualified, quoteIdent, quoteLiteral } from '../warehouse/identifiers.js';
import { PiiKeyMissingError } from '../warehouse/warehouse-errors.js';
import type { SqlConnection } from '../warehouse/sql-connection.js';
import { duckdbDialect, postgresDialect } from '../warehouse/warehouse-dialect.js';

/** The environment variable whose salt, when set, gives the key (named in the error without one). */
const PII_SALT_VARIABLE = 'LOYALTY_PII_SALT';

/** The session setting (PostgreSQL) or variable (DuckDB) the hashing key is held in while an export reads. */
const KEY_SETTING = { postgres: 'loyalty_etl.personal_data_key', duckdb: 'loyalty_etl_personal_data_key' } as const;

/** A fixed text hashed as a personal value would be: its hash in the manifest tells a later export the key changed. */
const KEY_CHECK_TEXT = 'loyalty-etl: the key this export was hashed with';

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

/**
 * Puts the hashing key in the export's session (inside its transaction, on PostgreSQL), as a parameter, and returns
 * the policy with its key: the policy's own (`LOYALTY_PII_SALT`'s), else the key the warehouse keeps, which every
 * run hashes with when no salt is set.
 *
 * @throws PiiKeyMissingError under `hash` with neither.
 */
export async function holdKey(
  conn: Pick<SqlConnection, 'run' | 'all'>,
  warehouse: 'duckdb' | 'postgres',
  schema: string,
  policy: AnalystsPolicy,
): Promise<AnalystsPolicy> {
  if (policy.personalData !== 'hash') return policy;
  const key = policy.key ?? (await keptKey(conn, schema));
  if (key === undefined)
    throw new PiiKeyMissingError(
      `personal data is to be hashed, but the warehouse keeps no key yet and ${PII_SALT_VARIABLE} is not set: a run that hashes makes one, or export with --personal-data drop (or keep, in clear)`,
    );
  if (warehouse === 'duckdb') await conn.run(`SET VARIABLE ${KEY_SETTING.duckdb} = $1`, [key]);
  else await conn.run(`SELECT set_config('${KEY_SETTING.postgres}', $1, true)`, [key]);
  return { ...policy, key };
}

/** The key the warehouse keeps (`_etl_pii_key`), if it keeps one. */
async function keptKey(conn: Pick<SqlConnection, 'all'>, schema: string): Promise<string | undefined> {
  const [known] = await conn.all<{ n: number | string }>(
    `SELECT COUNT(*) AS n FROM information_schema.tables WHERE table_schema = ${quoteLiteral(schema)} AND table_name = ${quoteLiteral(PII_KEY_TABLE)}`,
  );
  if (Number(known?.n ?? 0) === 0) return undefined;
  const [kept] = await conn.all<{ key: string }>(
    `SELECT key FROM ${qualified(schema, PII_KEY_TABLE)} WHERE slot = 'personal_data'`,
  );
  return kept?.key;
}

/** What the manifest says of the key: the fixed text hashed under it (null but under `hash`); never the key. */
export function keyCheckOf(policy: AnalystsPolicy): string | null {
  if (policy.personalData !== 'hash' || !policy.key) return null;
  return createHash('sha256').update(`${policy.key}:${KEY_CHECK_TEXT}`).digest('hex');
}
