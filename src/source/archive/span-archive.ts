import { randomBytes } from 'node:crypto';
import { mkdir, open, type FileHandle } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { gzipSync } from 'node:zlib';
import type { SourceAnswer } from '../http-client.js';
import type { CustomerIdentity } from '../loyalty-api.js';

/** Text gathered before it is compressed into one gzip member and appended to the span's file. */
export const ARCHIVE_BATCH_BYTES = 1 << 20;

/** A span's window, as its archive file records it. */
export interface ArchivedWindow {
  start: string;
  end: string;
}

/** The first line of a span's file: what was loaded, by which run, from when. */
export interface SpanHeader {
  job: string;
  stream: string;
  runId: string;
  windows: ArchivedWindow[];
  /** The page size the span's listings were asked with: a replay asks the same pages. */
  pageSize: number;
  /** When the span began asking (ISO UTC). */
  opened: string;
}

/** The lines of a span's file (JSON, one per line). */
export type ArchiveLine =
  | ({ kind: 'span' } & SpanHeader)
  | ({ kind: 'customer' } & CustomerIdentity)
  | ({ kind: 'answer' } & SourceAnswer)
  | { kind: 'committed'; at: string };

/** The folder of a job's stream in the archive (`job=<name>`: a job named `..` stays a folder name). */
export function streamFolder(root: string, job: string, stream: string): string {
  return join(root, `job=${job}`, stream);
}

/** `2026-11-25T16:48:08.123Z` → `20261125T164808123Z`: sortable, and safe in a file name. */
export function compactInstant(iso: string): string {
  return iso.replace(/[-:.]/g, '');
}

/**
 * The raw answers of one span, written to one file of gzip members (`<first day>_<last day>_<opened>_<tag>.jsonl.gz`
 * under `job=<job>/<stream>/`): a header line, then every customer the span handed on to be asked and every
 * answer it got, gathered in batches of about {@link ARCHIVE_BATCH_BYTES} of text that are compressed as they fill
 * and appended in order. A kill leaves at worst a cut last member, which the reader drops with the lines
 * it held; {@link seal} (before the span's commit) makes every answer kept so far durable, so an answer counted as
 * loaded is on disk. A write that fails is thrown by `seal`, and the span does not commit.
 */
export class SpanArchive {
  readonly file: string;
  private lines: string[] = [];
  private bytes = 0;
  private writing: Promise<void> = Promise.resolve();
  private failure: unknown;
  private handle: Promise<FileHandle> | undefined;

  constructor(root: string, header: SpanHeader) {
    const first = header.windows[0]!.start;
    const last = header.windows.at(-1)!.end;
    const name = `${first}_${last}_${compactInstant(header.opened)}_${randomBytes(4).toString('hex')}.jsonl.gz`;
    this.file = join(streamFolder(root, header.job, header.stream), name);
    this.add({ kind: 'span', ...header });
  }

  /** Keeps one answer (the source client's `keep` hook). */
  readonly keep = (answer: SourceAnswer): void => this.add({ kind: 'answer', ...answer });

  /** Keeps a customer the span handed on to be asked: a replay asks the same customers. */
  customer(customer: CustomerIdentity): void {
    this.add({ kind: 'customer', customerId: customer.customerId, phone: customer.phone, email: customer.email });
  }

  /** The customers of `customers`, each kept as it is handed on. */
  async *customers(customers: AsyncIterable<CustomerIdentity>): AsyncIterable<CustomerIdentity> {
    for await (const c of customers) {
      this.customer(c);
      yield c;
    }
  }

  /** Makes everything kept so far durable (written and fsynced, the file's folder too); throws what a write hit. */
  async seal(): Promise<void> {
    await this.flush();
    if (this.failure !== undefined) throw this.failure;
    try {
      const handle = await this.handle!;
      await handle.sync();
      // the stream's folder, the job's and the archive's own may be new: each entry must survive too
      const folder = dirname(this.file);
      for (const f of [folder, dirname(folder), dirname(dirname(folder))]) await syncFolder(f);
    } catch (error) {
      throw archiveWriteError(this.file, error);
    }
  }

  /** Marks the span committed (after its transaction) and closes the file. A kill before the mark is survived: see the reader. */
  async committed(): Promise<void> {
    this.add({ kind: 'committed', at: new Date().toISOString() });
    await this.close();
  }

  /** Writes what is gathered and closes the file (a span that did not commit keeps its answers, unmarked). */
  async close(): Promise<void> {
    await this.flush();
    const handle = this.handle;
    this.handle = undefined;
    if (handle) await (await handle).close();
  }

  private add(line: ArchiveLine): void {
    const text = JSON.stringify(line);
    this.lines.push(text);
    this.bytes += text.length + 1;
    if (this.bytes >= ARCHIVE_BATCH_BYTES) void this.flush();
  }

  /**
   * Compresses the gathered lines into one gzip member and appends it after those before it. The compression runs
   * here, on the pipeline's thread: compressed on the thread pool, batches waited there in the heap while the
   * source's answers kept coming, over a hundred MB of them in a backfill; here a batch is gone before the next
   * answer is read, and only the compressed members wait for their write.
   */
  private flush(): Promise<void> {
    if (this.lines.length === 0) return this.writing;
    const member = gzipSync(`${this.lines.join('\n')}\n`);
    this.lines = [];
    this.bytes = 0;
    this.writing = this.writing
      .then(async () => {
        if (this.failure !== undefined) return;
        const handle = await this.open();
        await handle.write(member);
      })
      .catch((error: unknown) => {
        this.failure ??= archiveWriteError(this.file, error);
      });
    return this.writing;
  }

  private open(): Promise<FileHandle> {
    this.handle ??= mkdir(dirname(this.file), { recursive: true }).then(() => open(this.file, 'a'));
    return this.handle;
  }
}

/** Fsyncs a folder, so that a file created in it survives a crash; a system that cannot (some file systems) is let be. */
async function syncFolder(folder: string): Promise<void> {
  let handle: FileHandle | undefined;
  try {
    handle = await open(folder, 'r');
    await handle.sync();
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== 'EISDIR' && code !== 'EINVAL' && code !== 'EPERM') throw error;
  } finally {
    await handle?.close();
  }
}

/**
 * A write of the archive that failed, as a line that says it was the archive and where: an error of the file system
 * names neither (`ENOSPC: no space left on device, write`). Its `code` and `path` stay, for whoever tells a full disk.
 */
export function archiveWriteError(file: string, error: unknown): Error {
  const e = error as NodeJS.ErrnoException;
  const reason = e?.code === 'ENOSPC' ? 'no space left on device (ENOSPC)' : (e?.message ?? String(error));
  return Object.assign(new Error(`the raw archive could not be written at ${file}: ${reason}`, { cause: error }), {
    code: e?.code,
    path: file,
  });
}
