import type { SqlConnection } from '../load/warehouse/sql-connection.js';

/** One acknowledged event that `loyalty_events` could not take, and why. */
export interface QuarantinedEvent {
  reason: string;
  /** ISO UTC, when the receiver took the call; unknown for a spool file that holds no event. */
  receivedAt?: string;
  eventKey?: string;
  customerId?: string;
  /** The spool file it came from (DuckDB), as moved into the spool's `quarantine/` folder. */
  spoolFile?: string;
  /** The body as received; none for a file that held no event. */
  body?: string;
  /** The receiver or run that quarantined it. */
  runId: string;
}

/** Longest reason kept: a driver's message may quote the whole statement. */
const REASON_CHARS = 2000;

/**
 * Keeps an acknowledged event that `loyalty_events` could not take in `_etl_event_quarantine`, with its reason,
 * so that it stops no run and is counted by `status` and the status page until a person deals with it. Its text
 * is made well-formed first (a lone surrogate becomes U+FFFD, NUL is dropped): what could not be stored as an
 * event must still be storable as text. Throws when even that fails: then the warehouse itself is the problem.
 */
export async function quarantineEvent(conn: SqlConnection, entry: QuarantinedEvent, now = new Date()): Promise<void> {
  const text = (value: string | undefined) =>
    value === undefined ? null : value.replaceAll('\u0000', '').toWellFormed();
  await conn.run(
    `INSERT INTO ${conn.schemaSql}._etl_event_quarantine (quarantined_at, received_at, event_key, customer_id, reason, spool_file, body, _run_id)
     VALUES (CAST($1 AS TIMESTAMPTZ), CAST($2 AS TIMESTAMPTZ), $3, $4, $5, $6, $7, $8)`,
    [
      now.toISOString(),
      entry.receivedAt ?? null,
      text(entry.eventKey),
      text(entry.customerId),
      text(entry.reason.split('\n')[0]!.slice(0, REASON_CHARS)),
      text(entry.spoolFile),
      text(entry.body),
      entry.runId,
    ],
  );
}
