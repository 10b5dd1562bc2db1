import type { Day } from '../plan/days.js';
import type { SqlConnection } from '../load/warehouse/sql-connection.js';

/** The windows of `stream` from `from` to `to` that hold rejected records (`_etl_rejects`): what `replay --rejects` loads again. */
export async function rejectedWindows(
  conn: SqlConnection,
  job: string,
  stream: string,
  from: Day,
  to: Day,
): Promise<Set<Day>> {
  const rows = await conn.db
    .selectFrom('_etl_rejects')
    .select('window_start')
    .distinct()
    .where('job', '=', job)
    .where('stream', '=', stream)
    .where('window_start', '>=', from)
    .where('window_start', '<=', to)
    .execute();
  return new Set(rows.map((r) => String(r.window_start)));
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
