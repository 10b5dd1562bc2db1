import { randomBytes } from 'node:crypto';
import { mkdir, open, readdir, readFile, rename, rm, stat, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import type { LoyaltyEvent } from './loyalty-event.js';
import { SpoolFolderError, UnreadableSpoolFileError } from './webhook-errors.js';

/** One received event as its spool file holds it. */
export interface SpooledEvent {
  /** ISO UTC: when the receiver took the call (`loyalty_events.received_at`). */
  receivedAt: string;
  /** The receiver that took it (`loyalty_events._run_id`). */
  receiverId: string;
  event: LoyaltyEvent;
}

/** The error of a file operation on the spool as a {@link SpoolFolderError} naming the folder, when it is one of the folder's. */
function folderError(dir: string, doing: string, error: unknown): unknown {
  const e = error as NodeJS.ErrnoException;
  if (!['EACCES', 'EPERM', 'ENOTDIR', 'EROFS', 'EEXIST', 'ENOENT', 'ELOOP', 'EISDIR'].includes(e?.code ?? ''))
    return error;
  return new SpoolFolderError(
    `webhook spool ${dir} cannot be ${doing} (${e.code}${e.path && e.path !== dir ? ` at ${e.path}` : ''}); check destination.event_spool and its permissions`,
  );
}

/** Files in `incoming/` older than this belong to a write that never finished: its call was never answered 200. */
const ABANDONED_WRITE_MS = 10 * 60_000;

/**
 * The webhook receiver's spool for a DuckDB warehouse: a directory of event files that the receiver writes and
 * each `run` ingests into `loyalty_events`, so that the receiver never needs the warehouse file (DuckDB lets one
 * process open it) and a call is never refused because a run holds it.
 *
 * Why files rather than a database of the receiver's own: a second DuckDB file would again belong to one process
 * (the receiver and the run ingesting it), and SQLite would be a native module to build; a directory is shared by
 * any number of processes, and POSIX gives what durability needs — a file is written to `incoming/`, flushed to
 * disk, renamed into `ready/` (atomic) and the directory flushed, and only then is the call answered. A receiver
 * killed at any instant leaves either no file in `ready/` (the call was not answered, the sender retries) or a
 * whole one. File names sort in the order calls were received (milliseconds, then process and a counter), which
 * is the order ingest numbers events in.
 *
 * @example
 * const spool = new EventSpool('./warehouse.events');
 * await spool.prepare();
 * await spool.append({ receivedAt: new Date().toISOString(), receiverId, event }); // durable once resolved
 */
export class EventSpool {
  private counter = 0;

  constructor(readonly dir: string) {}

  private get incoming(): string {
    return join(this.dir, 'incoming');
  }

  private get ready(): string {
    return join(this.dir, 'ready');
  }

  /** Where files that hold no event are moved, for a person to look at. */
  get unreadableDir(): string {
    return join(this.dir, 'unreadable');
  }

  /** Creates the spool's folders, and removes files of writes that were abandoned (their calls were never answered). */
  async prepare(): Promise<void> {
    try {
      await mkdir(this.incoming, { recursive: true });
      await mkdir(this.ready, { recursive: true });
      await readdir(this.incoming);
    } catch (error) {
      throw folderError(this.dir, 'made or read', error);
    }
    const now = Date.now();
    for (const name of await readdir(this.incoming)) {
      const file = join(this.incoming, name);
      const info = await stat(file).catch(() => undefined);
      if (info && now - info.mtimeMs > ABANDONED_WRITE_MS) await rm(file, { force: true });
    }
  }

  /** Writes and deletes a file where events are written: fails now, rather than at the first call, on a folder that cannot be written. */
  async probe(): Promise<void> {
    const file = join(this.incoming, `.probe-${process.pid}`);
    try {
      const handle = await open(file, 'w');
      await handle.sync().finally(() => handle.close());
      await unlink(file);
    } catch (error) {
      throw folderError(this.dir, 'written', error);
    }
  }

  /** Writes one event so that a crash of the process or the machine cannot lose it, then resolves with its file name. */
  async append(entry: SpooledEvent): Promise<string> {
    const name = `${String(Date.parse(entry.receivedAt)).padStart(15, '0')}-${process.pid}-${String(++this.counter).padStart(9, '0')}-${randomBytes(3).toString('hex')}.json`;
    const temporary = join(this.incoming, name);
    try {
      const handle = await open(temporary, 'wx');
      try {
        await handle.writeFile(JSON.stringify(entry));
        await handle.sync();
      } finally {
        await handle.close();
      }
      await rename(temporary, join(this.ready, name));
    } catch (error) {
      // a disk that is full or gone: nothing half-written stays behind, and the call is not answered 200
      await rm(temporary, { force: true }).catch(() => undefined);
      throw error;
    }
    await syncDirectory(this.ready);
    return name;
  }

  /** Names of the events waiting to be ingested, oldest first. */
  async pending(): Promise<string[]> {
    const names = await readdir(this.ready).catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') return [];
      throw folderError(this.dir, 'read', error);
    });
    return names.filter((n) => n.endsWith('.json')).sort();
  }

  /** Reads one waiting event. @throws UnreadableSpoolFileError when the file holds no spooled event. */
  async read(name: string): Promise<SpooledEvent> {
    return (await this.readSized(name)).entry;
  }

  /** Reads one waiting event, and says how many bytes its file holds. */
  async readSized(name: string): Promise<{ entry: SpooledEvent; bytes: number }> {
    const raw = await readFile(join(this.ready, name));
    const text = raw.toString('utf8');
    let entry: Partial<SpooledEvent>;
    try {
      entry = JSON.parse(text) as Partial<SpooledEvent>;
    } catch {
      throw new UnreadableSpoolFileError(`${name}: not JSON`);
    }
    const event = entry.event;
    if (
      typeof entry.receivedAt !== 'string' ||
      Number.isNaN(Date.parse(entry.receivedAt)) ||
      typeof entry.receiverId !== 'string' ||
      !event ||
      typeof event.event_key !== 'string' ||
      typeof event.customer_id !== 'string' ||
      typeof event.payload !== 'string'
    ) {
      throw new UnreadableSpoolFileError(`${name}: not a spooled loyalty event`);
    }
    return { entry: entry as SpooledEvent, bytes: raw.length };
  }

  /** Deletes events that are in the warehouse now. */
  async remove(names: readonly string[]): Promise<void> {
    for (const name of names)
      await unlink(join(this.ready, name)).catch((error: NodeJS.ErrnoException) =>
        error.code === 'ENOENT' ? undefined : Promise.reject(error),
      );
    if (names.length > 0) await syncDirectory(this.ready);
  }

  /** Where {@link quarantine} moves a waiting event. */
  quarantinePath(name: string): string {
    return join(this.dir, 'quarantine', name);
  }

  /** Moves an event the warehouse refused out of the way, kept for a person to look at (`_etl_event_quarantine` says why). */
  async quarantine(name: string): Promise<string> {
    const target = this.quarantinePath(name);
    await mkdir(join(this.dir, 'quarantine'), { recursive: true });
    await rename(join(this.ready, name), target);
    await syncDirectory(this.ready);
    return target;
  }

  /** Moves a file that holds no event out of the way, so that it neither stops nor repeats every ingest. */
  async setAside(name: string): Promise<string> {
    await mkdir(this.unreadableDir, { recursive: true });
    const target = join(this.unreadableDir, name);
    await rename(join(this.ready, name), target);
    return target;
  }
}

/** Flushes a directory's entries (a rename or unlink in it) to disk. */
async function syncDirectory(dir: string): Promise<void> {
  const handle = await open(dir, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}
