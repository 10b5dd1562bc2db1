import type { DestinationSettings } from '../plan/job-plan.js';
import type { Destination } from '../load/destination.js';
import { Mutex } from '../load/warehouse/mutex.js';
import { openDestination } from '../load/warehouses.js';
import type { SqlConnection } from '../load/warehouse/sql-connection.js';
import { isDataError } from '../load/warehouse/warehouse-errors.js';
import { quarantineEvent } from './event-quarantine.js';
import type { LoyaltyEvent } from './loyalty-event.js';

/**
 * What storing an event did: a new row, nothing because the same event is already stored, or a row in
 * `_etl_event_quarantine` because `loyalty_events` cannot take its values (sending it again would not help).
 */
export type SaveOutcome = 'stored' | 'duplicate' | 'quarantined';

/** Where the receiver puts events. `save` resolves only once the event is committed. */
export interface EventStore {
  /** Stores `event`, received at `receivedAt` (default: now). */
  save(event: LoyaltyEvent, receivedAt?: Date): Promise<SaveOutcome>;
  close(): Promise<void>;
}

/** The columns of `loyalty_events`, in the order every insert writes them. */
export const LOYALTY_EVENT_COLUMNS =
  'event_key, seq, received_at, event_trigger, origin_source, country_iso, customer_id, phone, tier_name, tier_order, ' +
  'points, cumulative_credit, point_expiry, payload, _run_id, _loaded_at';

/**
 * The values of an event's own columns (`event_trigger` to `payload`), each cast to its column's type, with `param`
 * giving the placeholder of each value: what the receiver and `replay` both write.
 */
export function eventValues(event: LoyaltyEvent, param: (value: unknown) => string): string {
  return (
    `${param(event.event_trigger)}, ${param(event.origin_source)}, ${param(event.country_iso)}, ` +
    `${param(event.customer_id)}, ${param(event.phone)}, ${param(event.tier_name)}, ` +
    `CAST(${param(event.tier_order)} AS INTEGER), CAST(${param(event.points)} AS DECIMAL(18,4)), ` +
    `CAST(${param(event.cumulative_credit)} AS DECIMAL(18,4)), CAST(${param(event.point_expiry)} AS TIMESTAMPTZ), ` +
    `CAST(${param(event.payload)} AS JSON)`
  );
}

/**
 * Inserts one event in its own transaction, numbered after every event stored before it, unless an event with
 * the same key is already there. With `exclusive` (a warehouse several processes write) the table is locked
 * first, so numbers follow commit order across processes and the "since" bookmark of the postings selection
 * never skips an event committed late.
 */
export async function insertLoyaltyEvent(
  conn: SqlConnection,
  event: LoyaltyEvent,
  stamp: { runId: string; now: () => Date; exclusive: boolean },
): Promise<SaveOutcome> {
  const table = `${conn.schemaSql}.loyalty_events`;
  return conn.transaction(async () => {
    if (stamp.exclusive) await conn.run(`LOCK TABLE ${table} IN EXCLUSIVE MODE`);
    const existing = await conn.all(`SELECT 1 AS found FROM ${table} WHERE event_key = $1`, [event.event_key]);
    if (existing.length > 0) return 'duplicate';
    const receivedAt = stamp.now().toISOString();
    const params: unknown[] = [event.event_key, receivedAt];
    const values = eventValues(event, (value) => `$${params.push(value)}`);
    params.push(stamp.runId);
    await conn.run(
      `INSERT INTO ${table} (${LOYALTY_EVENT_COLUMNS})
       SELECT $1, COALESCE(MAX(seq), 0) + 1, CAST($2 AS TIMESTAMPTZ), ${values}, $${params.length}, CAST($2 AS TIMESTAMPTZ)
         FROM ${table}`,
      params,
    );
    return 'stored';
  });
}

/**
 * Stores events in the configured warehouse, one at a time: what the webhook command uses for PostgreSQL, which
 * stays open (for DuckDB it spools events instead, `SpoolEventStore`, so a run never makes it wait). On a DuckDB
 * file, which belongs to one process, it opens the file when an event arrives and releases it after
 * `idleReleaseMs` without one; while another process holds it, `save` fails (the receiver answers 503 and the
 * sender retries).
 */
export class WarehouseEventStore implements EventStore {
  private destination: Destination | null = null;
  private releaseTimer: NodeJS.Timeout | null = null;
  private readonly turns = new Mutex();

  constructor(
    private readonly config: DestinationSettings,
    private readonly options: {
      runId: string;
      now?: () => Date;
      idleReleaseMs?: number;
      open?: (config: DestinationSettings) => Promise<Destination>;
    },
  ) {}

  /** Opens the warehouse once (creating or upgrading its tables) and says which it is; fails like `save` would. */
  check(): Promise<string> {
    return this.turns.run(async () => {
      const destination = await this.acquire();
      this.scheduleRelease();
      return destination.describe();
    });
  }

  save(event: LoyaltyEvent, receivedAt?: Date): Promise<SaveOutcome> {
    return this.turns.run(async () => {
      const destination = await this.acquire();
      const now = receivedAt ? () => receivedAt : (this.options.now ?? (() => new Date()));
      try {
        return await destination.withConnection((conn) =>
          insertLoyaltyEvent(conn, event, {
            runId: this.options.runId,
            now,
            exclusive: destination.capabilities.multiProcess,
          }),
        );
      } catch (error) {
        // an event the table refuses would be refused at every retry: kept in quarantine rather than answered 5xx forever
        if (!isDataError(error)) throw error;
        const received = now();
        await destination.withConnection((conn) =>
          quarantineEvent(
            conn,
            {
              reason: (error as Error).message,
              receivedAt: received.toISOString(),
              eventKey: event.event_key,
              customerId: event.customer_id,
              body: event.payload,
              runId: this.options.runId,
            },
            received,
          ),
        );
        return 'quarantined';
      } finally {
        this.scheduleRelease();
      }
    });
  }

  close(): Promise<void> {
    return this.turns.run(() => this.release());
  }

  private async acquire(): Promise<Destination> {
    if (this.releaseTimer) clearTimeout(this.releaseTimer);
    this.releaseTimer = null;
    this.destination ??= await (this.options.open ?? openDestination)(this.config);
    return this.destination;
  }

  private scheduleRelease(): void {
    if (!this.destination || this.destination.capabilities.multiProcess) return;
    this.releaseTimer = setTimeout(() => void this.turns.run(() => this.release()), this.options.idleReleaseMs ?? 1000);
  }

  private async release(): Promise<void> {
    if (this.releaseTimer) clearTimeout(this.releaseTimer);
    this.releaseTimer = null;
    const destination = this.destination;
    this.destination = null;
    await destination?.close();
  }
}
