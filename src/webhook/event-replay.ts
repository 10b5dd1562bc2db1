import type { Destination } from '../load/destination.js';
import type { SqlConnection } from '../load/warehouse/sql-connection.js';
import { isDataError } from '../load/warehouse/warehouse-errors.js';
import { quarantineEvent } from './event-quarantine.js';
import { parseLoyaltyEvent, type LoyaltyEvent } from './loyalty-event.js';
import { eventValues, LOYALTY_EVENT_COLUMNS } from './loyalty-event-store.js';
import { InvalidEventError } from './webhook-errors.js';

/** One event as the raw archive keeps it: the row the receiver made of it, when it took it, and which receiver. */
export interface KeptEvent {
  event: LoyaltyEvent;
  /** ISO UTC: when the receiver took the call (the row's `received_at`). */
  receivedAt: string;
  receiverId: string;
}

/** What a replay of kept events did to `loyalty_events`. */
export interface EventReplay {
  /** Events read from the archive (a call delivered twice counts once). */
  events: number;
  /** Rows the table did not hold, inserted. */
  inserted: number;
  /** Rows the table held, written again from their payload (same key, `seq`, `received_at`). */
  rewritten: number;
  /** Events the table refused, kept in `_etl_event_quarantine` (once). */
  quarantined: number;
  /** Events the receiver stored that today's reading of the webhook refuses: left as they are, and reported. */
  unreadable: Array<{ eventKey: string; receivedAt: string; problem: string }>;
}

/** Rows per statement: 16 parameters each, well within both warehouses' limits. */
const BATCH = 200;

/**
 * Writes kept webhook events into `loyalty_events` again, as the receiver stored them: each row is made anew
 * from its payload by today's reading of the webhook (so a fix to that reading reaches the stored rows), keeps
 * its key, `received_at` and receiver (`_run_id`), and, when the table holds it, its `seq`. An event the table
 * lacks (a lost warehouse) is numbered after every event stored, in the order given (the order received): so the
 * postings selection's bookmark never passes it unasked, and a warehouse rebuilt from the archive numbers its
 * events as the receiver did. Re-run, it changes nothing. An event the table refuses goes to
 * `_etl_event_quarantine`, as the receiver would have put it, once.
 */
export async function replayEvents(
  destination: Destination,
  kept: AsyncIterable<KeptEvent[]>,
  options: { timezone: string; runId: string },
): Promise<EventReplay> {
  const result: EventReplay = { events: 0, inserted: 0, rewritten: 0, quarantined: 0, unreadable: [] };
  const seen = new Set<string>();
  for await (const group of kept) {
    let batch: KeptEvent[] = [];
    for (const entry of group) {
      const row = reread(entry, options.timezone, result);
      if (!row || seen.has(row.event.event_key)) continue;
      seen.add(row.event.event_key);
      result.events++;
      batch.push(row);
      if (batch.length >= BATCH) {
        await writeBatch(destination, batch, options.runId, result);
        batch = [];
      }
    }
    if (batch.length > 0) await writeBatch(destination, batch, options.runId, result);
  }
  return result;
}

/** The event read again from its payload by today's reading; undefined (and reported) when that refuses it. */
function reread(entry: KeptEvent, timezone: string, result: EventReplay): KeptEvent | undefined {
  try {
    return { ...entry, event: parseLoyaltyEvent(JSON.parse(entry.event.payload) as unknown, timezone) };
  } catch (error) {
    if (!(error instanceof InvalidEventError) && !(error instanceof SyntaxError)) throw error;
    result.unreadable.push({ eventKey: entry.event.event_key, receivedAt: entry.receivedAt, problem: error.message });
    return undefined;
  }
}

/** Writes a batch in one transaction; one the table refuses is written event by event, the refused ones quarantined. */
async function writeBatch(
  destination: Destination,
  batch: KeptEvent[],
  runId: string,
  result: EventReplay,
): Promise<void> {
  try {
    const counts = await destination.withConnection((conn) =>
      conn.transaction(() => writeRows(conn, batch, destination.capabilities.multiProcess)),
    );
    result.inserted += counts.inserted;
    result.rewritten += counts.rewritten;
    return;
  } catch (error) {
    if (batch.length === 1 && isDataError(error)) {
      await quarantineOnce(destination, batch[0]!, error, runId);
      result.quarantined++;
      return;
    }
    if (batch.length === 1) throw error;
  }
  for (const entry of batch) await writeBatch(destination, [entry], runId, result);
}

/** Deletes the rows of the batch's keys and inserts them again, keeping the `seq` and `received_at` of those held. */
async function writeRows(
  conn: SqlConnection,
  batch: KeptEvent[],
  exclusive: boolean,
): Promise<{ inserted: number; rewritten: number }> {
  const table = `${conn.schemaSql}.loyalty_events`;
  // as the receiver does: numbers follow commit order across processes that store events at once
  if (exclusive) await conn.run(`LOCK TABLE ${table} IN EXCLUSIVE MODE`);
  const keys = batch.map((k) => k.event.event_key);
  const held = new Map<string, { seq: number; receivedAt: string; runId: string }>();
  const rows = await conn.all<{ event_key: string; seq: string | number; received_at: string; _run_id: string }>(
    `SELECT event_key, seq, CAST(received_at AS VARCHAR) AS received_at, _run_id FROM ${table} WHERE event_key IN (${keys.map((_, i) => `$${i + 1}`).join(', ')})`,
    keys,
  );
  for (const r of rows) held.set(r.event_key, { seq: Number(r.seq), receivedAt: r.received_at, runId: r._run_id });
  const [last] = await conn.all<{ seq: string | number | null }>(`SELECT MAX(seq) AS seq FROM ${table}`);
  let next = Number(last?.seq ?? 0);
  if (held.size > 0)
    await conn.run(
      `DELETE FROM ${table} WHERE event_key IN (${[...held.keys()].map((_, i) => `$${i + 1}`).join(', ')})`,
      [...held.keys()],
    );
  const loadedAt = new Date().toISOString();
  const params: unknown[] = [];
  const values: string[] = [];
  const p = (value: unknown) => `$${params.push(value)}`;
  for (const { event, receivedAt, receiverId } of batch) {
    const before = held.get(event.event_key);
    values.push(
      `(${p(event.event_key)}, CAST(${p(before?.seq ?? ++next)} AS BIGINT), CAST(${p(before?.receivedAt ?? receivedAt)} AS TIMESTAMPTZ), ` +
        `${eventValues(event, p)}, ${p(before?.runId ?? receiverId)}, CAST(${p(loadedAt)} AS TIMESTAMPTZ))`,
    );
  }
  await conn.run(`INSERT INTO ${table} (${LOYALTY_EVENT_COLUMNS}) VALUES ${values.join(',\n')}`, params);
  return { inserted: batch.length - held.size, rewritten: held.size };
}

/** Keeps an event the table refuses in `_etl_event_quarantine`, unless a row there already holds its key. */
async function quarantineOnce(
  destination: Destination,
  entry: KeptEvent,
  error: unknown,
  runId: string,
): Promise<void> {
  await destination.ledgerTransaction(async (conn) => {
    const found = await conn.all(
      `SELECT 1 AS found FROM ${conn.schemaSql}._etl_event_quarantine WHERE event_key = $1`,
      [entry.event.event_key],
    );
    if (found.length > 0) return;
    await quarantineEvent(conn, {
      reason: error instanceof Error ? error.message : String(error),
      receivedAt: entry.receivedAt,
      eventKey: entry.event.event_key,
      customerId: entry.event.customer_id,
      body: entry.event.payload,
      runId,
    });
  });
}
