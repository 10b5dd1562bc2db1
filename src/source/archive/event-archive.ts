import { SpanArchive } from './span-archive.js';

/** The archive's job folder of webhook events (`job=_webhook/loyalty_events/`): events belong to no job. */
export const EVENTS_JOB = '_webhook';
export const EVENTS_STREAM = 'loyalty_events';

/**
 * Keeps the loyalty webhook events a receiver takes in the raw archive: one file per receiver and UTC day, each
 * event a line (`path` the hook, `body` the event as validated), written and fsynced before the receiver stores
 * it, so an event stored (and answered 200) is in the archive. Events come a few a second at most: a gzip member
 * each costs little.
 */
export class EventArchive {
  private day: string | undefined;
  private file: SpanArchive | undefined;
  private readonly closing: Array<Promise<void>> = [];

  constructor(
    private readonly root: string,
    private readonly receiverId: string,
  ) {}

  /** Keeps one event, durably; throws what the disk refused (the receiver then answers 503, and the sender retries). */
  async keep(path: string, event: unknown): Promise<void> {
    const at = new Date().toISOString();
    const day = at.slice(0, 10);
    if (day !== this.day || !this.file) {
      if (this.file) this.closing.push(this.file.committed());
      this.day = day;
      this.file = new SpanArchive(this.root, {
        job: EVENTS_JOB,
        stream: EVENTS_STREAM,
        runId: this.receiverId,
        windows: [{ start: day, end: day }],
        pageSize: 0,
        opened: at,
      });
    }
    const file = this.file;
    file.keep({ path, query: {}, status: 200, body: JSON.stringify(event), at });
    await file.seal();
  }

  /** Marks the files done and closes them. */
  async close(): Promise<void> {
    if (this.file) this.closing.push(this.file.committed());
    this.file = undefined;
    await Promise.all(this.closing);
  }
}
