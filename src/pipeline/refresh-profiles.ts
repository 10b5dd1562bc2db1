import type { Destination } from '../load/destination.js';
import type { Day } from '../plan/days.js';
import type { SchemaContract } from '../plan/job-plan.js';
import type { AnswerArchive } from '../source/archive/answer-archive.js';
import type { LoyaltyApi } from '../source/loyalty-api.js';
import { PROFILE_TABLES, readProfiles } from '../streams/profiles.js';
import { fieldReject } from './record-rows.js';

/**
 * Replaces `profiles` and `profile_fields` with what the source lists now, through the same staging and merge as
 * every table: staged, then merged in one transaction (each table replaced whole). A member that cannot be read is
 * NULL and kept in `_etl_field_rejects` (stream `profiles`), in place of what the last refresh could not read. Reference data is not loaded
 * by window, so no window is recorded; its rows are staged under `day`, the day of the refresh. With an `archive`,
 * the answers are kept as a span of their own (`profiles`), durably before the commit, for `replay`.
 */
export async function refreshProfiles(
  api: LoyaltyApi,
  destination: Destination,
  job: string,
  runId: string,
  day: Day,
  archive?: AnswerArchive,
  schemaContract?: SchemaContract,
): Promise<{ profiles: number; fields: number; unreadFields: number }> {
  const windows = [{ start: day, end: day }];
  const archived = archive?.openSpan({ job, stream: 'profiles', runId, windows, pageSize: 0 });
  const source = archived ? api.scoped() : api;
  if (archived) source.keepAnswers(archived.keep);
  const rows = await readProfiles(source).catch(async (error: unknown) => {
    await archived?.close();
    throw error;
  });
  const load = await destination.openSpan({
    job,
    stream: 'profiles',
    runId,
    windows,
    tables: PROFILE_TABLES,
    schemaContract,
  });
  try {
    let seq = 0;
    for (const table of PROFILE_TABLES)
      await load.append(
        table.name,
        rows[table.name as 'profiles' | 'profile_fields'].map((row) => ({ seq: ++seq, windowStart: day, row })),
      );
    await load.rejectFields(rows.field_rejects.map((r) => fieldReject(day, r)));
    await archived?.seal();
    await load.commit(windows, async (conn, merge) => {
      // the tables are replaced whole, and so are the fields an earlier refresh could not read
      await conn.db.deleteFrom('_etl_field_rejects').where('job', '=', job).where('stream', '=', 'profiles').execute();
      return merge();
    });
  } catch (error) {
    await load.abort();
    await archived?.close();
    throw error;
  }
  await archived?.committed();
  return {
    profiles: rows.profiles.length,
    fields: rows.profile_fields.length,
    unreadFields: rows.field_rejects.length,
  };
}
