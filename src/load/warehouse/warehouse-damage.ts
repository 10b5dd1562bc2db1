import { qualified } from './identifiers.js';
import type { SqlConnection } from './sql-connection.js';

/**
 * What the warehouse said when a read found it damaged, or undefined when `error` is about something else: DuckDB's
 * "Corrupt database file" (a block whose checksum does not match), PostgreSQL's `data_corrupted` and `index_corrupted`
 * (SQLSTATE XX001, XX002). A damaged block stays damaged: running again fails the same way.
 */
export function damageOf(error: unknown): string | undefined {
  for (let e = error as (Error & { code?: unknown }) | undefined, depth = 0; e && depth < 5; depth++) {
    if (e.code === 'XX001' || e.code === 'XX002') return firstLine(e.message);
    if (typeof e.message === 'string' && /Corrupt database file|checksum .* does not match/i.test(e.message))
      return firstLine(e.message).replace(/^.*?(Corrupt database file)/i, '$1');
    e = e.cause as typeof e;
  }
  return undefined;
}

/** The one line of a warehouse found damaged: what the read said, and that running again will not mend it. */
export function damagedLine(detail: string): string {
  return `the warehouse is damaged and cannot be read (${detail}); this is not transient, running again fails the same way: restore it from a backup, or rebuild it in a new warehouse from the raw archive (loyalty-etl replay)`;
}

/**
 * Reads every table of `schema` whole, each value of each row (`rowHash` folds a row `r` into one value, in the
 * dialect's words), so that a damaged block anywhere is found: a count alone reads none. Throws what the read hit.
 */
export async function readEveryTable(conn: SqlConnection, rowHash: string, schema: string): Promise<number> {
  const tables = await conn.all<{ table_name: string }>(
    `SELECT table_name FROM information_schema.tables WHERE table_schema = $1 AND table_type = 'BASE TABLE' ORDER BY table_name`,
    [schema],
  );
  for (const { table_name } of tables)
    await conn.all(`SELECT COUNT(*) AS n, bit_xor(${rowHash}) AS h FROM ${qualified(schema, table_name)} r`);
  return tables.length;
}

function firstLine(text: string): string {
  return text.split('\n')[0]!;
}
