import { qualified } from '../warehouse/identifiers.js';
import type { SqlConnection } from '../warehouse/sql-connection.js';

/** Who (re)creates a view, and when: for `_etl_views`. */
export interface ViewStamp {
  runId: string;
  /** ISO UTC. */
  now: string;
}

/**
 * The views of `target` (the warehouse's `schema` or the analysts' schema) that exist and are recorded in `_etl_views`,
 * each with its recorded definition: for {@link replaceView} of many views in two reads instead of two a view.
 */
export async function standingViews(
  conn: SqlConnection,
  schema: string,
  target: string = schema,
): Promise<Map<string, string>> {
  const prefix = target === schema ? '' : `${target}.`;
  const exists = new Set(
    (
      await conn.all<{ table_name: string }>(
        `SELECT table_name FROM information_schema.tables WHERE table_catalog = current_database() AND table_schema = $1`,
        [target],
      )
    ).map((r) => r.table_name),
  );
  const recorded = await conn.all<{ view_name: string; definition: string }>(
    `SELECT view_name, definition FROM ${qualified(schema, '_etl_views')}`,
  );
  const out = new Map<string, string>();
  for (const r of recorded) {
    if (!r.view_name.startsWith(prefix)) continue;
    const name = r.view_name.slice(prefix.length);
    if (exists.has(name)) out.set(name, r.definition);
  }
  return out;
}

/**
 * Makes `name` the view `SELECT …` `select`, inside the caller's transaction, unless `_etl_views` says it is that
 * already: a view is dropped and created only when its definition changes, so a commit that adds no column or
 * survey takes no lock on the views analysts read. Dropped and created rather than replaced: PostgreSQL's
 * `CREATE OR REPLACE VIEW` refuses a view whose columns moved. Returns whether the view changed.
 *
 * The view is made in `schema`, the warehouse's, or in `target` (the analysts' schema of views over it), recorded in
 * the warehouse's `_etl_views` either way (as `target.name` for another schema). `standing` is what
 * {@link standingViews} read of `target` in the same transaction, when many views are replaced at once.
 */
export async function replaceView(
  conn: SqlConnection,
  schema: string,
  name: string,
  select: string,
  stamp: ViewStamp,
  target: string = schema,
  standing?: ReadonlyMap<string, string>,
): Promise<boolean> {
  const recorded = target === schema ? name : `${target}.${name}`;
  // a view dropped by hand is made again
  const current = standing ? standing.get(name) : await standingDefinition(conn, schema, target, name, recorded);
  if (current === select) return false;
  // In the warehouse's schema, CASCADE: the view analysts read it through (PostgreSQL's analysts schema) goes too,
  // and is made again in the same commit. Nothing of the pipeline reads the analysts' views: no CASCADE there.
  await conn.run(`DROP VIEW IF EXISTS ${qualified(target, name)}${target === schema ? ' CASCADE' : ''}`);
  await conn.run(`CREATE VIEW ${qualified(target, name)} AS ${select}`);
  await conn.run(`DELETE FROM ${qualified(schema, '_etl_views')} WHERE view_name = $1`, [recorded]);
  await conn.run(
    `INSERT INTO ${qualified(schema, '_etl_views')} (view_name, definition, updated_at, run_id) VALUES ($1, $2, CAST($3 AS TIMESTAMPTZ), $4)`,
    [recorded, select, stamp.now, stamp.runId],
  );
  return true;
}

/** The recorded definition of one view, if it exists. */
async function standingDefinition(
  conn: SqlConnection,
  schema: string,
  target: string,
  name: string,
  recorded: string,
): Promise<string | undefined> {
  const exists = await conn.all(
    `SELECT 1 FROM information_schema.tables WHERE table_catalog = current_database() AND table_schema = $1 AND table_name = $2`,
    [target, name],
  );
  if (exists.length === 0) return undefined;
  const [known] = await conn.all<{ definition: string }>(
    `SELECT definition FROM ${qualified(schema, '_etl_views')} WHERE view_name = $1`,
    [recorded],
  );
  return known?.definition;
}
