import type { DestinationConfig } from '../../src/config/config-schema.js';
import type { Destination } from '../../src/load/destination.js';
import { openDestination } from '../../src/load/open-destination.js';
import type { SqlConnection } from '../../src/load/sql-connection.js';

/** Opens the warehouse of `config` for the length of `fn`. */
export async function withWarehouse<T>(config: DestinationConfig, fn: (conn: SqlConnection, destination: Destination) => Promise<T>): Promise<T> {
  const destination = await openDestination(config);
  try {
    return await destination.withConnection((conn) => fn(conn, destination));
  } finally {
    await destination.close();
  }
}

/** An instant column as ISO UTC with milliseconds, the way the emulator's ground truth writes it. */
export function isoOf(epochMs: number | string | null | undefined): string | null {
  return epochMs === null || epochMs === undefined ? null : new Date(Math.round(Number(epochMs))).toISOString();
}

/** A query's rows with every value as JSON-friendly text or number. */
export function rows<T = Record<string, unknown>>(conn: SqlConnection, sql: string, params: unknown[] = []): Promise<T[]> {
  return conn.all<T>(sql, params);
}

/** SQL for an instant column read as epoch milliseconds (same on DuckDB and PostgreSQL). */
export function epochMs(column: string): string {
  return `EXTRACT(EPOCH FROM ${column}) * 1000`;
}

/** `accounts` with `account_custom_fields`, in the shape of the emulator's TruthAccount, keyed by customer. */
export async function readAccounts(conn: SqlConnection): Promise<Map<string, Record<string, unknown>>> {
  const accounts = await conn.all<Record<string, string | number | null>>(
    `SELECT customer_id, phone, email, first_name, last_name, CAST(birthdate AS VARCHAR) AS birthdate, source,
            ${epochMs('profile_set_at')} AS profile_set_at, country, ${epochMs('customer_since')} AS customer_since,
            ${epochMs('member_since')} AS member_since, nationality, gender, city, language
       FROM accounts`,
  );
  const fields = await conn.all<{ customer_id: string; field_name: string; value: string | null }>('SELECT customer_id, field_name, value FROM account_custom_fields');
  const byCustomer = new Map<string, Record<string, string | null>>();
  for (const f of fields) {
    const map = byCustomer.get(f.customer_id) ?? {};
    map[f.field_name] = f.value;
    byCustomer.set(f.customer_id, map);
  }
  const out = new Map<string, Record<string, unknown>>();
  for (const a of accounts) {
    out.set(String(a.customer_id), {
      ...a,
      profile_set_at: isoOf(a.profile_set_at),
      customer_since: isoOf(a.customer_since),
      member_since: isoOf(a.member_since),
      custom_fields: byCustomer.get(String(a.customer_id)) ?? {},
    });
  }
  return out;
}

/** Checks that every `cf_` column holds what `account_custom_fields` holds under the key `_etl_columns` maps it to. */
export async function pivotMismatches(conn: SqlConnection): Promise<string[]> {
  const map = await conn.all<{ column_name: string; source_key: string }>(`SELECT column_name, source_key FROM _etl_columns WHERE table_name = 'accounts'`);
  const wide = await conn.all<Record<string, string | null>>('SELECT * FROM accounts');
  const long = await readAccounts(conn);
  const problems: string[] = [];
  for (const row of wide) {
    const fields = long.get(row.customer_id!)!.custom_fields as Record<string, string | null>;
    for (const { column_name, source_key } of map) {
      const expected = source_key in fields ? fields[source_key] : null;
      if ((row[column_name] ?? null) !== expected) problems.push(`${row.customer_id} ${column_name}: ${row[column_name]} vs ${expected}`);
    }
  }
  return problems;
}
