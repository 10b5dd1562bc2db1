import { qualified } from '../warehouse/identifiers.js';
import type { SqlConnection } from '../warehouse/sql-connection.js';

/** Who (re)creates a view, and when: for `_etl_views`. */
export interface ViewStamp {
  runId: string;
  /** ISO UTC. */
  now: string;
}

/**
 * Makes `name` the view `SELECT …` `select`, inside the caller's transaction, unless `_etl_views` says it is that
 * already: a view is dropped and created only when its definition changes, so a commit that adds no column or
 * survey takes no lock on the views analysts read. Dropped and created rather than replaced: PostgreSQL's
 * `CREATE OR REPLACE VIEW` refuses a view whose columns moved. Returns whether the view changed.
 */
export async function replaceView(
  conn: SqlConnection,
  schema: string,
  name: string,
  select: string,
  stamp: ViewStamp,
): Promise<boolean> {
  const known = await conn.all<{ definition: string }>(
    `SELECT definition FROM ${qualified(schema, '_etl_views')} WHERE view_name = $1`,
    [name],
  );
  // a view dropped by hand is made again
  const exists = await conn.all(
    `SELECT 1 FROM information_schema.tables WHERE table_catalog = current_database() AND table_schema = $1 AND table_name = $2`,
    [schema, name],
  );
  if (known[0]?.definition === select && exists.length > 0) return false;
  // CASCADE: the view analysts read it through (PostgreSQL's analysts schema) goes too, and is made again in the same commit
  await conn.run(`DROP VIEW IF EXISTS ${qualified(schema, name)} CASCADE`);
  await conn.run(`CREATE VIEW ${qualified(schema, name)} AS ${select}`);
  await conn.run(`DELETE FROM ${qualified(schema, '_etl_views')} WHERE view_name = $1`, [name]);
  await conn.run(
    `INSERT INTO ${qualified(schema, '_etl_views')} (view_name, definition, updated_at, run_id) VALUES ($1, $2, CAST($3 AS TIMESTAMPTZ), $4)`,
    [name, select, stamp.now, stamp.runId],
  );
  return true;
}
