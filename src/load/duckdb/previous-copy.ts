import type { DuckDBConnection } from '@duckdb/node-api';
import type { AnalystsPolicy } from '../../plan/job-plan.js';
import { isLedger, tableKey, type LedgerRow, type SourceShape } from './copy-ledger.js';

/** Why the copy `dst` cannot be started from, or undefined when it can. */
export async function mismatch(
  conn: DuckDBConnection,
  policy: AnalystsPolicy,
  shape: SourceShape,
  ledger: readonly LedgerRow[],
  recorded: readonly LedgerRow[],
): Promise<string | undefined> {
  const first = recorded[0];
  if (first === undefined) return 'the previous copy lists no table';
  if (recorded.some((r) => r.personalData !== policy.personalData))
    return `the previous copy was written under personal_data: ${first.personalData}, now ${policy.personalData}`;
  const keyCheck = ledger[0]?.keyCheck ?? null;
  if (recorded.some((r) => r.keyCheck !== keyCheck)) return 'the previous copy was hashed with another key';
  if (recorded.some((r) => r.catalogHash !== shape.catalogHash))
    return "the warehouse's views, macros, schemas, sequences, indexes or types changed";
  const was = new Map(recorded.map((r) => [tableKey(r.schema, r.table), r]));
  if (was.size !== recorded.length) return 'the previous copy lists a table twice';
  for (const [key, table] of shape.tables) {
    const old = was.get(key);
    if (old === undefined) return `the table ${nameOf(table)} is new`;
    if (old.definitionHash !== table.definitionHash)
      return `the table ${nameOf(table)} changed its columns, types, constraints or comments`;
  }
  // the copy holds the tables it lists, and no other
  const present = (
    await conn.runAndReadAll(
      `SELECT schema_name, table_name FROM duckdb_tables() WHERE database_name = 'dst' AND NOT temporary`,
    )
  ).getRowObjectsJson() as Array<{ schema_name: string; table_name: string }>;
  const listed = present.filter((t) => !isLedger(t.schema_name, t.table_name));
  if (listed.length !== was.size || listed.some((t) => !was.has(tableKey(t.schema_name, t.table_name))))
    return 'the previous copy does not hold the tables it lists';
  return undefined;
}

/** A table as `schema.table`. */
export function nameOf(table: { schema: string; table: string }): string {
  return `${table.schema}.${table.table}`;
}
