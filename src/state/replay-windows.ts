import type { Day } from '../plan/days.js';
import type { SqlConnection } from '../load/warehouse/sql-connection.js';

/**
 * The windows of `stream` from `from` to `to` that hold rejected records (`_etl_rejects`) or fields loaded as NULL
 * (`_etl_field_rejects`): what `replay --rejects` loads again, so that a fix reads both.
 */
export async function rejectedWindows(
  conn: SqlConnection,
  job: string,
  stream: string,
  from: Day,
  to: Day,
): Promise<Set<Day>> {
  const windows = new Set<Day>();
  for (const table of ['_etl_rejects', '_etl_field_rejects'] as const) {
    const rows = await conn.db
      .selectFrom(table)
      .select('window_start')
      .distinct()
      .where('job', '=', job)
      .where('stream', '=', stream)
      .where('window_start', '>=', from)
      .where('window_start', '<=', to)
      .execute();
    for (const r of rows) windows.add(String(r.window_start));
  }
  return windows;
}

/**
 * Whether reference data (`profiles`, `profile_fields`) of `job` holds fields loaded as NULL: `replay --rejects` then
 * loads the newest kept profiles again, as they are replaced whole whatever the range.
 */
export async function profilesRejected(conn: SqlConnection, job: string): Promise<boolean> {
  const row = await conn.db
    .selectFrom('_etl_field_rejects')
    .select('stream')
    .where('job', '=', job)
    .where('stream', '=', 'profiles')
    .limit(1)
    .executeTakeFirst();
  return row !== undefined;
}

/**
 * The windows of `stream` recorded done, each with the run that loaded it last (`<day> <run id>`): a span whose
 * archive was not marked committed (a kill between its commit and the mark) is known committed by this.
 */
export async function windowsDoneBy(conn: SqlConnection, job: string, stream: string): Promise<Set<string>> {
  const rows = await conn.db
    .selectFrom('_etl_windows')
    .select(['window_start', 'run_id'])
    .where('job', '=', job)
    .where('stream', '=', stream)
    .where('status', '=', 'done')
    .execute();
  return new Set(rows.map((r) => `${String(r.window_start)} ${String(r.run_id)}`));
}
