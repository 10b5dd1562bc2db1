import type { AnalystsPolicy } from '../../plan/job-plan.js';
import { qualified, quoteIdent } from '../warehouse/identifiers.js';
import { analystNote, analystValue, isPipelineRelation } from './personal-data.js';
import { replaceView, standingViews, type ViewStamp } from './replace-view.js';
import type { SqlConnection } from '../warehouse/sql-connection.js';
import { describeRelations } from '../catalog/table-comments.js';
import { NEVER_FOR_ANALYSTS } from '../catalog/warehouse-catalog.js';
import type { WarehouseDialect } from '../warehouse/warehouse-dialect.js';

/** The pipeline's record of the analysts' policy (PostgreSQL, `sql/postgres/011_analysts.sql`); not shown to analysts. */
const POLICY_TABLE = '_etl_analysts';

/**
 * The transaction-level lock that keeps one session at a time on the analysts' schema: its views are made again from
 * every table, so two commits of different streams, or a run starting beside a backfill worker, would otherwise
 * drop and create the same view at once. A span's commit takes it right after its stream's lock, before any DDL.
 */
export async function holdAnalystsLock(conn: SqlConnection, schema: string): Promise<void> {
  await conn.run('SELECT pg_advisory_xact_lock(hashtext($1))', [`${schema}.analysts`]);
}

/**
 * Records `policy` for the warehouse (a run, backfill or demo starts with it) and keeps the analysts' schema of views
 * in step. A warehouse without the policy table (DuckDB, whose analysts read the published copy) is left alone.
 */
export async function recordAnalystsPolicy(
  conn: SqlConnection,
  dialect: WarehouseDialect,
  schema: string,
  policy: AnalystsPolicy,
  stamp: ViewStamp,
): Promise<void> {
  if (!policy.schema || !(await hasPolicyTable(conn, schema))) return;
  await conn.transaction(async () => {
    await holdAnalystsLock(conn, schema);
    const [held] = await conn.all<{
      analysts_schema: string;
      personal_data: string;
      key: string | null;
      pipeline_tables: boolean;
    }>(`SELECT analysts_schema, personal_data, key, pipeline_tables FROM ${qualified(schema, POLICY_TABLE)}`);
    const pipelineTables = policy.pipelineTables ?? false;
    if (
      !held ||
      held.analysts_schema !== policy.schema ||
      held.personal_data !== policy.personalData ||
      held.key !== (policy.key ?? null) ||
      held.pipeline_tables !== pipelineTables
    ) {
      await conn.run(`DELETE FROM ${qualified(schema, POLICY_TABLE)}`);
      await conn.run(
        `INSERT INTO ${qualified(schema, POLICY_TABLE)} (analysts_schema, personal_data, key, pipeline_tables, updated_at) VALUES ($1, $2, $3, $4, CAST($5 AS TIMESTAMPTZ))`,
        [policy.schema, policy.personalData, policy.key ?? null, pipelineTables, stamp.now],
      );
    }
    await refreshAnalystViews(conn, dialect, schema, stamp);
  });
}

/**
 * Makes the analysts' schema hold one view per table and view of the warehouse's schema (the policy table aside),
 * each column as `analystValue` gives it under the recorded policy, with the same comments; a view is made again
 * only when its definition changed or it is missing (a view it reads was made again, which drops it). Inside the
 * caller's transaction: after every commit that may add a column or a view, and when the policy is recorded.
 */
export async function refreshAnalystViews(
  conn: SqlConnection,
  dialect: WarehouseDialect,
  schema: string,
  stamp: ViewStamp,
): Promise<void> {
  if (!(await hasPolicyTable(conn, schema))) return;
  await holdAnalystsLock(conn, schema);
  const [policyRow] = await conn.all<{
    analysts_schema: string;
    personal_data: AnalystsPolicy['personalData'];
    key: string | null;
    pipeline_tables: boolean;
  }>(`SELECT analysts_schema, personal_data, key, pipeline_tables FROM ${qualified(schema, POLICY_TABLE)}`);
  if (!policyRow) return;
  const target = policyRow.analysts_schema;
  const policy: AnalystsPolicy = { personalData: policyRow.personal_data, pipelineTables: policyRow.pipeline_tables };
  await conn.run(`CREATE SCHEMA IF NOT EXISTS ${quoteIdent(target)}`);
  const standing = await standingViews(conn, schema, target);
  for (const relation of await describeRelations(conn, dialect, schema)) {
    if (!isShownToAnalysts(policy, relation.name)) {
      if (standing.has(relation.name)) await dropAnalystView(conn, schema, target, relation.name);
      continue;
    }
    const key = `(SELECT k."key" FROM ${qualified(schema, POLICY_TABLE)} k)`;
    const select = relation.columns.map(
      (c) =>
        `${analystValue(dialect, policy, relation.name, c.name, `s.${quoteIdent(c.name)}`, key)} AS ${quoteIdent(c.name)}`,
    );
    const definition = `SELECT ${select.join(', ')} FROM ${qualified(schema, relation.name)} s`;
    if (!(await replaceView(conn, schema, relation.name, definition, stamp, target, standing))) continue;
    if (relation.description)
      await conn.run(
        `COMMENT ON VIEW ${qualified(target, relation.name)} IS ${dialect.commentLiteral(relation.description)}`,
      );
    for (const c of relation.columns)
      if (c.description)
        await conn.run(
          `COMMENT ON COLUMN ${qualified(target, relation.name)}.${quoteIdent(c.name)} IS ${dialect.commentLiteral(c.description + analystNote(policy, relation.name, c.name))}`,
        );
  }
}

/** Whether analysts get a view of `relation`: the pipeline's secrets never; the pipeline's own when the policy says so. */
function isShownToAnalysts(policy: AnalystsPolicy, relation: string): boolean {
  if (NEVER_FOR_ANALYSTS.has(relation)) return false;
  return policy.pipelineTables === true || !isPipelineRelation(relation);
}

/** Drops the analysts' view of a relation they are no longer shown, and its record. */
async function dropAnalystView(conn: SqlConnection, schema: string, target: string, name: string): Promise<void> {
  await conn.run(`DROP VIEW IF EXISTS ${qualified(target, name)}`);
  await conn.run(`DELETE FROM ${qualified(schema, '_etl_views')} WHERE view_name = $1`, [`${target}.${name}`]);
}

async function hasPolicyTable(conn: SqlConnection, schema: string): Promise<boolean> {
  const rows = await conn.all(
    `SELECT 1 FROM information_schema.tables WHERE table_catalog = current_database() AND table_schema = $1 AND table_name = $2`,
    [schema, POLICY_TABLE],
  );
  return rows.length > 0;
}
