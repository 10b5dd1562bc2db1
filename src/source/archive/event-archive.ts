import { readSpan, type AnswerArchive } from './answer-archive.js';
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

  /**
   * Keeps one event, durably, with the instant the receiver took it (`loyalty_events.received_at`, which a replay
   * gives it again); throws what the disk refused (the receiver then answers 503, and the sender retries).
   */
  async keep(path: string, event: unknown, at = new Date().toISOString()): Promise<void> {
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

/** One kept event, as its line holds it. */
export interface ArchivedEvent {
  /** The event as the receiver validated it (JSON). */
  body: string;
  /** ISO UTC: when the receiver took it. */
  at: string;
  receiverId: string;
}

/**
 * The events kept with their instant in [`fromUtc`, `toUtc`) (ISO UTC), one UTC day at a time, each day's in the
 * order they were received (the files of several receivers merged): a day's events are held at once, never the
 * whole range. Every line of a file counts, marked or not: each was fsynced before its event was stored.
 */
export async function* archivedEvents(
  archive: AnswerArchive,
  fromUtc: string,
  toUtc: string,
): AsyncIterable<ArchivedEvent[]> {
  const files = (await archive.spanFiles(EVENTS_JOB, EVENTS_STREAM)).filter(
    (f) => f.from >= fromUtc.slice(0, 10) && f.from <= toUtc.slice(0, 10),
  );
  const days = [...new Set(files.map((f) => f.from))].sort();
  for (const day of days) {
    const events: ArchivedEvent[] = [];
    for (const f of files.filter((file) => file.from === day)) {
      const span = await readSpan(f.file);
      if (!span) continue;
      for (const a of span.answers)
        if (a.at >= fromUtc && a.at < toUtc) events.push({ body: a.body, at: a.at, receiverId: span.header.runId });
    }
    // a stable sort: one receiver's events of the same millisecond keep the order it took them in
    yield events.sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : 0));
  }
}
