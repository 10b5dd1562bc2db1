import type { Destination } from '../load/destination.js';
import type { SqlConnection } from '../load/sql-connection.js';
import type { Logger } from '../log/logger.js';
import { type EventSpool, type SpooledEvent, UnreadableSpoolFileError } from './event-spool.js';

/** What one ingest of the spool did. */
export interface SpoolIngest {
  /** New rows in `loyalty_events`. */
  stored: number;
  /** Spooled events already in `loyalty_events` (a redelivered call, or a file a killed ingest left behind). */
  duplicates: number;
  /** Files that held no event, moved to the spool's `unreadable/` folder. */
  unreadable: number;
}

/** Events per transaction: bounded memory and a short hold of the warehouse, whatever the backlog. */
const BATCH = 2000;

/** The columns of a batch row, as the JSON handed to DuckDB's `from_json` names and types them. */
const BATCH_SHAPE = JSON.stringify([
  {
    ord: 'BIGINT',
    event_key: 'VARCHAR',
    received_at: 'VARCHAR',
    event_trigger: 'VARCHAR',
    origin_source: 'VARCHAR',
    country_iso: 'VARCHAR',
    customer_id: 'VARCHAR',
    phone: 'VARCHAR',
    tier_name: 'VARCHAR',
    tier_order: 'INTEGER',
    points: 'VARCHAR',
    cumulative_credit: 'VARCHAR',
    point_expiry: 'VARCHAR',
    payload: 'VARCHAR',
    run_id: 'VARCHAR',
  },
]);

/**
 * Moves the events the webhook receiver spooled into `loyalty_events`, oldest first, numbering them after every
 * event stored before (`seq`). Each batch commits in one transaction of its own, taking turns with the pipeline's
 * other writes; its files are deleted only after that commit. A kill at any instant therefore loses nothing: what
 * was not committed is still spooled, and what was committed but not yet deleted is found by its `event_key` at
 * the next ingest and stored once. A run calls it before its streams select the customers to ask.
 */
export async function ingestSpooledEvents(destination: Destination, spool: EventSpool, logger: Logger): Promise<SpoolIngest> {
  const result: SpoolIngest = { stored: 0, duplicates: 0, unreadable: 0 };
  const names = await spool.pending();
  for (let i = 0; i < names.length; i += BATCH) {
    const batch = names.slice(i, i + BATCH);
    const entries: Array<{ name: string; entry: SpooledEvent }> = [];
    for (const name of batch) {
      try {
        entries.push({ name, entry: await spool.read(name) });
      } catch (error) {
        if (!(error instanceof UnreadableSpoolFileError)) throw error;
        const moved = await spool.setAside(name);
        result.unreadable++;
        logger.error({ file: moved, err: error }, 'a spooled webhook file holds no loyalty event; moved aside, not ingested');
      }
    }
    const stored = await destination.ledgerTransaction((conn) =>
      insertSpooled(
        conn,
        entries.map((e) => e.entry),
        new Date().toISOString(),
      ),
    );
    result.stored += stored;
    result.duplicates += entries.length - stored;
    await spool.remove(entries.map((e) => e.name));
  }
  if (names.length > 0) logger.info({ spool: spool.dir, ...result }, 'webhook events ingested from the spool into loyalty_events');
  return result;
}

/**
 * Inserts the events not yet in `loyalty_events` (by `event_key`; within the batch, the first received), numbered
 * in the order given. The batch travels as one JSON parameter, read by DuckDB's `from_json` (the spool serves
 * DuckDB warehouses only). Returns the rows inserted.
 */
async function insertSpooled(conn: SqlConnection, entries: readonly SpooledEvent[], loadedAt: string): Promise<number> {
  const seen = new Set<string>();
  const rows = [];
  for (const { event, receivedAt, receiverId } of entries) {
    if (seen.has(event.event_key)) continue;
    seen.add(event.event_key);
    rows.push({ ...event, ord: rows.length, received_at: receivedAt, run_id: receiverId });
  }
  if (rows.length === 0) return 0;
  const table = `${conn.schemaSql}.loyalty_events`;
  // DuckDB answers an INSERT with one row: the count of rows inserted
  const [inserted] = await conn.all<{ Count: number | string }>(
    `INSERT INTO ${table} (event_key, seq, received_at, event_trigger, origin_source, country_iso, customer_id, phone, tier_name, tier_order, points, cumulative_credit, point_expiry, payload, _run_id, _loaded_at)
     WITH batch AS (SELECT unnest(from_json(CAST($1 AS JSON), '${BATCH_SHAPE}'), recursive := true)),
          fresh AS (SELECT * FROM batch b WHERE NOT EXISTS (SELECT 1 FROM ${table} l WHERE l.event_key = b.event_key))
     SELECT event_key, (SELECT COALESCE(MAX(seq), 0) FROM ${table}) + ROW_NUMBER() OVER (ORDER BY ord), CAST(received_at AS TIMESTAMPTZ), event_trigger, origin_source,
            country_iso, customer_id, phone, tier_name, tier_order, CAST(points AS DECIMAL(18,4)), CAST(cumulative_credit AS DECIMAL(18,4)),
            CAST(point_expiry AS TIMESTAMPTZ), CAST(payload AS JSON), run_id, CAST($2 AS TIMESTAMPTZ)
       FROM fresh`,
    [JSON.stringify(rows), loadedAt],
  );
  return Number(inserted?.Count ?? 0);
}
