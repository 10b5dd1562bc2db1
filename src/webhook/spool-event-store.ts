import type { EventSpool } from './event-spool.js';
import type { EventStore, SaveOutcome } from './loyalty-event-store.js';
import type { LoyaltyEvent } from './loyalty-event.js';

/**
 * Stores events in the receiver's spool (a DuckDB warehouse): `save` resolves once the event is on disk, whatever
 * the warehouse is doing; the next `run` ingests it into `loyalty_events`, where a redelivered call is found by its
 * key and stored once. So every call is `stored` here: whether it is a redelivery is decided at ingest.
 */
export class SpoolEventStore implements EventStore {
  private prepared: Promise<void> | undefined;

  constructor(
    private readonly spool: EventSpool,
    private readonly options: { runId: string; now?: () => Date },
  ) {}

  /** Creates the spool's folders and proves it can write there, before the first call; says where events go. */
  async check(): Promise<string> {
    await (this.prepared ??= this.spool.prepare());
    await this.spool.probe();
    return `event spool ${this.spool.dir} (each run ingests it into loyalty_events)`;
  }

  async save(event: LoyaltyEvent, receivedAt?: Date): Promise<SaveOutcome> {
    await (this.prepared ??= this.spool.prepare());
    await this.spool.append({
      receivedAt: (receivedAt ?? (this.options.now ?? (() => new Date()))()).toISOString(),
      receiverId: this.options.runId,
      event,
    });
    return 'stored';
  }

  async close(): Promise<void> {}
}
