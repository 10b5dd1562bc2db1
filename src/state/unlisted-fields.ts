import type { SqlConnection } from '../load/warehouse/sql-connection.js';
import { valuesList } from '../load/warehouse/values-list.js';

/** A member the spec does not list, as a span saw it: the record type, its path, the table keeping it, in how many rows. */
export interface UnlistedSighting {
  recordType: string;
  path: string;
  table: string;
  records: number;
}

/** A row of `_etl_unlisted_fields`. */
export interface UnlistedField {
  record_type: string;
  field_path: string;
  table_name: string;
  first_seen_run: string;
  first_seen_at: string;
  last_seen_run: string;
  last_seen_at: string;
  records: number;
}

/** Sightings written per statement. */
const BATCH = 500;

/**
 * Records, inside a span's transaction, the unlisted members the span loaded: a new one gets its first sighting
 * (this run, `at`), a known one its last sighting and more records. Returns the ones seen for the first time.
 */
export async function recordUnlistedFields(
  conn: SqlConnection,
  runId: string,
  at: string,
  sightings: readonly UnlistedSighting[],
): Promise<UnlistedSighting[]> {
  const fresh: UnlistedSighting[] = [];
  // one order for every span: two spans of a stream committing at once on PostgreSQL lock the rows alike, never crosswise
  const ordered = [...sightings].sort((x, y) => compare(x.recordType, y.recordType) || compare(x.path, y.path));
  for (let i = 0; i < ordered.length; i += BATCH) {
    const batch = ordered.slice(i, i + BATCH);
    const keys = valuesList(
      batch.map((s) => [s.recordType, s.path]),
      ['VARCHAR', 'VARCHAR'],
      1,
    );
    const known = await conn.all<{ record_type: string; field_path: string }>(
      `SELECT f.record_type, f.field_path FROM ${conn.schemaSql}._etl_unlisted_fields f JOIN (VALUES ${keys.sql}) v (t, p) ON f.record_type = v.t AND f.field_path = v.p`,
      keys.params,
    );
    const seen = new Set(known.map((k) => `${k.record_type}\u0000${k.field_path}`));
    fresh.push(...batch.filter((s) => !seen.has(`${s.recordType}\u0000${s.path}`)));
    const list = valuesList(
      batch.map((s) => [s.recordType, s.path, s.table, s.records]),
      ['VARCHAR', 'VARCHAR', 'VARCHAR', 'BIGINT'],
      3,
    );
    await conn.run(
      `INSERT INTO ${conn.schemaSql}._etl_unlisted_fields AS f (record_type, field_path, table_name, first_seen_run, first_seen_at, last_seen_run, last_seen_at, records)
       SELECT v.t, v.p, v.n, $1, CAST($2 AS TIMESTAMPTZ), $1, CAST($2 AS TIMESTAMPTZ), v.r FROM (VALUES ${list.sql}) v (t, p, n, r)
       ON CONFLICT (record_type, field_path) DO UPDATE
          SET last_seen_run = excluded.last_seen_run, last_seen_at = excluded.last_seen_at,
              records = f.records + excluded.records`,
      [runId, at, ...list.params],
    );
  }
  return fresh;
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Every unlisted member ever seen, the newest first; `runId` keeps those a run saw first. */
export async function readUnlistedFields(conn: SqlConnection, runId?: string): Promise<UnlistedField[]> {
  const where = runId === undefined ? '' : 'WHERE first_seen_run = $1';
  const rows = await conn.all<
    UnlistedField & { records: number | bigint | string; first_seen_at: unknown; last_seen_at: unknown }
  >(
    `SELECT record_type, field_path, table_name, first_seen_run, CAST(first_seen_at AS VARCHAR) AS first_seen_at, last_seen_run,
            CAST(last_seen_at AS VARCHAR) AS last_seen_at, records
       FROM ${conn.schemaSql}._etl_unlisted_fields ${where} ORDER BY first_seen_at DESC, record_type, field_path`,
    runId === undefined ? [] : [runId],
  );
  return rows.map((r) => ({
    ...r,
    records: Number(r.records),
    first_seen_at: String(r.first_seen_at),
    last_seen_at: String(r.last_seen_at),
  }));
}
