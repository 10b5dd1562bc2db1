import type { Destination } from '../load/destination.js';
import type { SqlConnection } from '../load/warehouse/sql-connection.js';
import type { Logger } from '../log/logger.js';
import { quarantineEvent } from './event-quarantine.js';
import { type EventSpool, type SpooledEvent } from './event-spool.js';
import { MAX_EVENT_BYTES } from './loyalty-event.js';
import { UnreadableSpoolFileError } from './webhook-errors.js';

/** What one ingest of the spool did. */
export interface SpoolIngest {
  /** New rows in `loyalty_events`. */
  stored: number;
  /** Spooled events already in `loyalty_events` (a redelivered call, or a file a killed ingest left behind). */
  duplicates: number;
  /** Files that held no event, moved to the spool's `unreadable/` folder (and noted in `_etl_event_quarantine`). */
  unreadable: number;
  /** Events `loyalty_events` refused, moved to the spool's `quarantine/` folder and kept in `_etl_event_quarantine`. */
  quarantined: number;
}

/**
 * Bounds of one transaction: bounded memory and a short hold of the warehouse, whatever the backlog. The bytes
 * matter as much as the count: a batch travels as one JSON text, which must stay under V8's limit on the length
 * of a string.
 */
const BATCH_EVENTS = 2000;
const BATCH_BYTES = 8 << 20;

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

type Spooled = { name: string; entry: SpooledEvent };

/**
 * Moves the events the webhook receiver spooled into `loyalty_events`, oldest first, numbering them after every
 * event stored before (`seq`). Each batch commits in one transaction of its own, taking turns with the pipeline's
 * other writes; its files are deleted only after that commit. A kill at any instant therefore loses nothing: what
 * was not committed is still spooled, and what was committed but not yet deleted is found by its `event_key` at
 * the next ingest and stored once. A run calls it before its streams select the customers to ask.
 *
 * No event can stop it: a batch the warehouse refuses is split until the events it refuses stand alone, and each
 * of those is kept in `_etl_event_quarantine` with the warehouse's reason, its file moved to `quarantine/`. Only
 * when the quarantine cannot take it either (the warehouse itself is failing) does the ingest fail.
 */
export async function ingestSpooledEvents(
  destination: Destination,
  spool: EventSpool,
  logger: Logger,
  runId = 'spool-ingest',
): Promise<SpoolIngest> {
  const result: SpoolIngest = { stored: 0, duplicates: 0, unreadable: 0, quarantined: 0 };
  const names = await spool.pending();
  let batch: Spooled[] = [];
  let bytes = 0;
  const flush = async () => {
    await storeBatch(destination, spool, batch, result, logger, runId);
    batch = [];
    bytes = 0;
  };
  for (const name of names) {
    let spooled: Spooled;
    let size: number;
    try {
      const read = await spool.readSized(name);
      spooled = { name, entry: read.entry };
      size = read.bytes;
    } catch (error) {
      if (!(error instanceof UnreadableSpoolFileError)) throw error;
      const moved = await spool.setAside(name);
      result.unreadable++;
      logger.error(
        { file: moved, err: error },
        'a spooled webhook file holds no loyalty event; moved aside, not ingested',
      );
      await destination.ledgerTransaction((conn) =>
        quarantineEvent(conn, { reason: error.message, spoolFile: moved, runId }),
      );
      continue;
    }
    const payloadBytes = Buffer.byteLength(spooled.entry.event.payload);
    if (payloadBytes > MAX_EVENT_BYTES) {
      // spooled by a receiver that took larger bodies: stored, it would stop every checkpoint of a DuckDB warehouse
      const reason = `payload of ${payloadBytes} bytes, over the ${MAX_EVENT_BYTES} an event may hold; the spool file keeps it whole`;
      await quarantineSpooled(destination, spool, spooled, reason, runId, false);
      result.quarantined++;
      logger.error(
        { eventKey: spooled.entry.event.event_key, file: name, bytes: payloadBytes },
        'a spooled webhook event is too large for loyalty_events; kept in quarantine',
      );
      continue;
    }
    if (batch.length > 0 && (batch.length >= BATCH_EVENTS || bytes + size > BATCH_BYTES)) await flush();
    batch.push(spooled);
    bytes += size;
  }
  if (batch.length > 0) await flush();
  if (names.length > 0)
    logger.info({ spool: spool.dir, ...result }, 'webhook events ingested from the spool into loyalty_events');
  return result;
}

/** Commits one batch, or, refused, its halves in turn, down to single events the quarantine takes instead. */
async function storeBatch(
  destination: Destination,
  spool: EventSpool,
  batch: Spooled[],
  result: SpoolIngest,
  logger: Logger,
  runId: string,
): Promise<void> {
  let stored: number;
  try {
    stored = await destination.ledgerTransaction((conn) =>
      insertSpooled(
        conn,
        batch.map((e) => e.entry),
        new Date().toISOString(),
      ),
    );
  } catch (error) {
    if (batch.length > 1) {
      const half = Math.ceil(batch.length / 2);
      await storeBatch(destination, spool, batch.slice(0, half), result, logger, runId);
      await storeBatch(destination, spool, batch.slice(half), result, logger, runId);
      return;
    }
    await quarantineSpooled(
      destination,
      spool,
      batch[0]!,
      error instanceof Error ? error.message : String(error),
      runId,
    ).catch((quarantineError: unknown) => {
      // the quarantine refused it too: the warehouse is failing, not the event
      throw error instanceof Error ? error : quarantineError;
    });
    result.quarantined++;
    logger.error(
      { eventKey: batch[0]!.entry.event.event_key, file: batch[0]!.name, err: error },
      'a spooled webhook event cannot be stored in loyalty_events; kept in _etl_event_quarantine and moved to the spool’s quarantine/ folder',
    );
    return;
  }
  result.stored += stored;
  result.duplicates += batch.length - stored;
  await spool.remove(batch.map((e) => e.name));
}

/**
 * Notes the event in `_etl_event_quarantine` (once, however often an ingest is cut off here), then moves its file
 * to the spool's `quarantine/` folder; `withBody` false leaves the body in the file only.
 */
async function quarantineSpooled(
  destination: Destination,
  spool: EventSpool,
  { name, entry }: Spooled,
  reason: string,
  runId: string,
  withBody = true,
): Promise<void> {
  const target = spool.quarantinePath(name);
  await destination.ledgerTransaction(async (conn) => {
    await conn.run(`DELETE FROM ${conn.schemaSql}._etl_event_quarantine WHERE spool_file = $1`, [target]);
    await quarantineEvent(conn, {
      reason,
      receivedAt: entry.receivedAt,
      eventKey: entry.event.event_key,
      customerId: entry.event.customer_id,
      spoolFile: target,
      ...(withBody ? { body: entry.event.payload } : {}),
      runId,
    });
  });
  await spool.quarantine(name);
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
