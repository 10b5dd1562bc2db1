import { DateTime } from 'luxon';
import type { SqlConnection } from '../load/warehouse/sql-connection.js';
import { readWatermark } from './ledger.js';

/**
 * How far a job's postings stream has read the loyalty webhook events (`_etl_event_bookmarks`).
 *
 * Events are numbered by `seq` in the order the receiver committed them. The bookmark `through_seq` of
 * (job, stream) promises: the customer of every event with `seq <= through_seq` was asked for its postings by a
 * committed span that covered the day the event was received. A span therefore asks for the customers of the
 * events after the bookmark, and in its own transaction moves the bookmark to the end of the longest run of
 * events it asked about that were all received before the end of the stream's new watermark day. Events
 * received later stay after the bookmark and are asked again by the next run, whose windows reach their day.
 */
export async function readEventBookmark(conn: SqlConnection, job: string, stream: string): Promise<number | undefined> {
  const rows = await conn.all<{ through_seq: string | number }>(
    `SELECT through_seq FROM ${conn.schemaSql}._etl_event_bookmarks WHERE job = $1 AND stream = $2`,
    [job, stream],
  );
  return rows[0] === undefined ? undefined : Number(rows[0].through_seq);
}

/** The number of the last event stored (0 before the first). */
export async function lastEventSeq(conn: SqlConnection): Promise<number> {
  const [row] = await conn.all<{ seq: string | number | null }>(
    `SELECT MAX(seq) AS seq FROM ${conn.schemaSql}.loyalty_events`,
  );
  return Number(row?.seq ?? 0);
}

/**
 * Moves the bookmark of (job, stream) forward, inside the span's transaction, after its watermark moved: to
 * `askedThrough` (the last event the span's selection covered), or to just before the first of those events
 * received after the end of the watermark day in `timezone` — never backwards.
 */
export async function advanceEventBookmark(
  conn: SqlConnection,
  request: { job: string; stream: string; askedThrough: number; timezone: string; runId: string; now: string },
): Promise<void> {
  const watermark = await readWatermark(conn, request.job, request.stream);
  if (watermark === undefined) return;
  const watermarkEnd = DateTime.fromISO(watermark, { zone: request.timezone })
    .plus({ days: 1 })
    .startOf('day')
    .toUTC()
    .toISO()!;
  const [late] = await conn.all<{ seq: string | number | null }>(
    `SELECT MIN(seq) AS seq FROM ${conn.schemaSql}.loyalty_events WHERE seq <= $1 AND received_at >= CAST($2 AS TIMESTAMPTZ)`,
    [request.askedThrough, watermarkEnd],
  );
  const through = late?.seq === null || late?.seq === undefined ? request.askedThrough : Number(late.seq) - 1;
  await conn.run(
    `INSERT INTO ${conn.schemaSql}._etl_event_bookmarks (job, stream, through_seq, updated_at, run_id) VALUES ($1, $2, $3, CAST($4 AS TIMESTAMPTZ), $5) ` +
      `ON CONFLICT (job, stream) DO UPDATE SET through_seq = GREATEST(${conn.schemaSql}._etl_event_bookmarks.through_seq, excluded.through_seq), updated_at = excluded.updated_at, run_id = excluded.run_id`,
    [request.job, request.stream, through, request.now, request.runId],
  );
}
