import { qualified, quoteIdent as q } from '../warehouse/identifiers.js';
import type { Statement } from '../warehouse/sql-connection.js';
import { stagedRows } from '../staging/staging.js';
import type { TableSpec } from '../table-spec.js';
import type { WarehouseDialect } from '../warehouse/warehouse-dialect.js';

/** What the statements of a `customer-state` or `customer-listing` table need of the merge. */
export interface StateMergeContext {
  dialect: WarehouseDialect;
  schema: string;
  tables: TableSpec[];
  runId: string;
  loadedAt: string;
}

/** The customers a span asked and when: its staged observations, less those that could not be asked. */
function askedCustomers(spec: TableSpec & { merge: { askedIn: string } }, ctx: StateMergeContext): string {
  const observations = ctx.tables.find((t) => t.name === spec.merge.askedIn);
  if (!observations) throw new Error(`table ${spec.name}: ${spec.merge.askedIn} is not loaded by the same stream`);
  return `(SELECT "customer_id", "observed_at" FROM ${stagedRows(ctx.dialect, observations, ctx.tables)} o WHERE "outcome" <> 'unaskable')`;
}

/**
 * Statements that run before a state table's upsert. `customer-state`: the rows of every customer asked go (the
 * upsert inserts what the service reports now). `customer-listing`: rows of a customer asked that the span did not
 * stage are marked gone; the `firstSeen` of the rows about to be replaced is kept aside for {@link afterUpsert}.
 */
export function beforeUpsert(spec: TableSpec, ctx: StateMergeContext): Statement[] {
  const { merge } = spec;
  if (merge.kind !== 'customer-state' && merge.kind !== 'customer-listing') return [];
  const target = qualified(ctx.schema, spec.name);
  const asked = askedCustomers({ ...spec, merge }, ctx);
  if (merge.kind === 'customer-state')
    return [{ sql: `DELETE FROM ${target} WHERE "customer_id" IN (SELECT "customer_id" FROM ${asked} a)`, params: [] }];
  const staged = stagedRows(ctx.dialect, spec, ctx.tables);
  const match = (a: string, b: string) => spec.key.map((k) => `${a}.${q(k)} = ${b}.${q(k)}`).join(' AND ');
  const gone = q(merge.gone);
  return [
    {
      sql:
        `UPDATE ${target} SET ${gone} = a."observed_at", "_run_id" = $1, "_loaded_at" = CAST($2 AS TIMESTAMPTZ) FROM ${asked} a ` +
        `WHERE ${target}."customer_id" = a."customer_id" AND ${target}.${gone} IS NULL ` +
        `AND NOT EXISTS (SELECT 1 FROM ${staged} s WHERE ${match('s', target)})`,
      params: [ctx.runId, ctx.loadedAt],
    },
    { sql: `DROP TABLE IF EXISTS ${seen(spec)}`, params: [] },
    {
      sql: `CREATE TEMP TABLE ${seen(spec)} AS SELECT ${[...spec.key, merge.firstSeen].map((c) => `t.${q(c)}`).join(', ')} FROM ${target} t WHERE EXISTS (SELECT 1 FROM ${staged} s WHERE ${match('s', 't')})`,
      params: [],
    },
  ];
}

/** For `customer-listing`: the rows replaced keep the instant they were first seen. */
export function afterUpsert(spec: TableSpec, ctx: StateMergeContext): Statement[] {
  const { merge } = spec;
  if (merge.kind !== 'customer-listing') return [];
  const target = qualified(ctx.schema, spec.name);
  const first = q(merge.firstSeen);
  const match = spec.key.map((k) => `k.${q(k)} = ${target}.${q(k)}`).join(' AND ');
  return [
    {
      sql: `UPDATE ${target} SET ${first} = k.${first} FROM ${seen(spec)} k WHERE ${match} AND k.${first} < ${target}.${first}`,
      params: [],
    },
    { sql: `DROP TABLE ${seen(spec)}`, params: [] },
  ];
}

function seen(spec: TableSpec): string {
  return q(`_seen_${spec.name}`);
}
