import { createReadStream } from 'node:fs';
import { readdir, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { pipeline } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';
import { constants, createGunzip } from 'node:zlib';
import { DAY_MS } from '../../plan/days.js';
import type { SourceAnswer } from '../http-client.js';
import type { CustomerIdentity } from '../loyalty-api.js';
import { SpanArchive, streamFolder, type ArchiveLine, type SpanHeader } from './span-archive.js';

/** How long and how much the archive keeps (`destination.archive.keep_days`, `.max_bytes`); unset keeps all. */
export interface ArchiveRetention {
  keepDays?: number | undefined;
  maxBytes?: number | undefined;
}

/** A span's file, as its name describes it (nothing read yet). */
export interface ArchivedSpanFile {
  file: string;
  job: string;
  stream: string;
  /** First day of its first window, last day of its last. */
  from: string;
  through: string;
  /** When the span began asking (the compact form of its name, sortable). */
  opened: string;
  bytes: number;
}

/** A span's file, read. */
export interface ArchivedSpan {
  header: SpanHeader;
  customers: CustomerIdentity[];
  answers: SourceAnswer[];
  /** The span's commit was marked after it: false for a span that failed, or one killed between its commit and the mark. */
  committed: boolean;
}

/** What `status` shows of the archive. */
export interface ArchiveUsage {
  root: string;
  bytes: number;
  files: number;
  /** When the oldest and newest spans kept began (ISO UTC), if any is kept. */
  oldest?: string;
  newest?: string;
}

const SPAN_FILE = /^(\d{4}-\d{2}-\d{2})_(\d{4}-\d{2}-\d{2})_(\d{8}T\d{9}Z)_[0-9a-f]+\.jsonl\.gz$/;

/**
 * The raw archive: every answer of the service a load got, compressed, one file per span, under `root` (by default
 * beside the warehouse: `<name>.archive/`; `destination.archive.path` otherwise). What `replay` reads instead of
 * the service. See docs/archive.md.
 */
export class AnswerArchive {
  constructor(
    readonly root: string,
    readonly retention: ArchiveRetention = {},
  ) {}

  /** A new span's file (nothing is written before its first batch is full, or it is sealed). */
  openSpan(header: Omit<SpanHeader, 'opened'>): SpanArchive {
    return new SpanArchive(this.root, { ...header, opened: new Date().toISOString() });
  }

  /** Every span file of `job` (of `stream`, when named), oldest first. */
  async spanFiles(job: string, stream?: string): Promise<ArchivedSpanFile[]> {
    const streams = stream ? [stream] : await names(join(this.root, `job=${job}`));
    const files: ArchivedSpanFile[] = [];
    for (const s of streams) {
      const folder = streamFolder(this.root, job, s);
      for (const name of await names(folder)) {
        const m = SPAN_FILE.exec(name);
        if (!m) continue;
        const file = join(folder, name);
        files.push({
          file,
          job,
          stream: s,
          from: m[1]!,
          through: m[2]!,
          opened: m[3]!,
          bytes: (await stat(file)).size,
        });
      }
    }
    return files.sort((a, b) => a.opened.localeCompare(b.opened) || a.file.localeCompare(b.file));
  }

  /** Size and span of everything kept. */
  async usage(): Promise<ArchiveUsage> {
    const usage: ArchiveUsage = { root: this.root, bytes: 0, files: 0 };
    const all = await this.allFiles();
    for (const f of all) {
      usage.bytes += f.bytes;
      usage.files++;
    }
    if (all.length > 0) {
      usage.oldest = isoOf(all[0]!.opened);
      usage.newest = isoOf(all.at(-1)!.opened);
    }
    return usage;
  }

  /**
   * Applies the retention: deletes the spans begun more than `keepDays` days before `now`, then the oldest until
   * what is left holds at most `maxBytes`. A span deleted can no longer be replayed. Returns the files deleted.
   */
  async prune(now = new Date()): Promise<number> {
    const { keepDays, maxBytes } = this.retention;
    if (keepDays === undefined && maxBytes === undefined) return 0;
    const all = await this.allFiles();
    const cutoff = keepDays === undefined ? '' : compact(new Date(now.getTime() - keepDays * DAY_MS));
    let total = all.reduce((sum, f) => sum + f.bytes, 0);
    let deleted = 0;
    for (const f of all) {
      const old = f.opened < cutoff;
      if (!old && (maxBytes === undefined || total <= maxBytes)) break;
      await rm(f.file, { force: true });
      total -= f.bytes;
      deleted++;
    }
    return deleted;
  }

  private async allFiles(): Promise<ArchivedSpanFile[]> {
    const files: ArchivedSpanFile[] = [];
    for (const folder of await names(this.root)) {
      if (folder.startsWith('job=')) files.push(...(await this.spanFiles(folder.slice('job='.length))));
    }
    return files.sort((a, b) => a.opened.localeCompare(b.opened));
  }
}

/**
 * Reads a span's file. A kill while it was written leaves a cut last gzip member: its complete lines are read and
 * the cut one dropped (such a span never committed, since its commit waits for the file to be sealed); a file cut
 * before its header is whole reads as undefined. A line that is not JSON anywhere else is an error naming the
 * file. The file is decompressed as a stream, a line at a time: what is held is the span's answers, not its
 * text besides.
 */
export async function readSpan(file: string): Promise<ArchivedSpan | undefined> {
  const span: Partial<ArchivedSpan> & { customers: CustomerIdentity[]; answers: SourceAnswer[] } = {
    customers: [],
    answers: [],
    committed: false,
  };
  for await (const line of spanLines(file)) {
    if (line.kind === 'span') {
      const { kind: _, ...header } = line;
      span.header = header;
    } else if (line.kind === 'customer')
      span.customers.push({ customerId: line.customerId, phone: line.phone, email: line.email });
    else if (line.kind === 'answer') {
      const { kind: _, ...answer } = line;
      span.answers.push(answer);
    } else if (line.kind === 'committed') span.committed = true;
  }
  // a kill before the span's first batch was whole leaves no header: that span never committed
  if (!span.header) return undefined;
  return span as ArchivedSpan;
}

/**
 * A span's header, whether its commit was marked, and (with `customers`) the customers it asked, read without
 * keeping (or parsing) its answers.
 */
export async function readSpanSummary(
  file: string,
  options: { customers?: boolean } = {},
): Promise<Omit<ArchivedSpan, 'answers'> | undefined> {
  let header: SpanHeader | undefined;
  let committed = false;
  const customers: CustomerIdentity[] = [];
  for await (const line of spanLines(file, options.customers ? [ANSWER] : [ANSWER, CUSTOMER])) {
    if (line.kind === 'span') {
      const { kind: _, ...rest } = line;
      header = rest;
    } else if (line.kind === 'customer')
      customers.push({ customerId: line.customerId, phone: line.phone, email: line.email });
    else if (line.kind === 'committed') committed = true;
  }
  return header ? { header, customers, committed } : undefined;
}

/** The answers of a span's file, in the order they came, read as they are taken (see `ArchivedSource`). */
export async function* spanAnswers(file: string): AsyncIterable<SourceAnswer> {
  for await (const line of spanLines(file, [CUSTOMER])) {
    if (line.kind !== 'answer') continue;
    const { kind: _, ...answer } = line;
    yield answer;
  }
}

/** How the lines a reader may pass over begin (`JSON.stringify` writes `kind` first). */
const ANSWER = '{"kind":"answer"';
const CUSTOMER = '{"kind":"customer"';

/**
 * The whole lines of a span's file, parsed, in order, decompressed as a stream (the gzip members one after the
 * other); text after the last newline (a line a kill cut) is dropped, and so are lines beginning with `skip`.
 */
async function* spanLines(file: string, skip: readonly string[] = []): AsyncIterable<ArchiveLine> {
  const decoder = new StringDecoder('utf8');
  // a pipeline: a reader that stops early (its loop left) closes the file too, and a read error reaches the loop
  const text = pipeline(createReadStream(file), createGunzip({ finishFlush: constants.Z_SYNC_FLUSH }), () => {});
  let rest = '';
  let n = 0;
  for await (const chunk of text as AsyncIterable<Buffer>) {
    const lines = (rest + decoder.write(chunk)).split('\n');
    rest = lines.pop()!;
    for (const raw of lines) {
      n++;
      if (skip.some((prefix) => raw.startsWith(prefix))) continue;
      try {
        yield JSON.parse(raw) as ArchiveLine;
      } catch {
        throw new Error(`${file}: line ${n} of the archive is not JSON`);
      }
    }
  }
}

async function names(folder: string): Promise<string[]> {
  try {
    return (await readdir(folder)).sort();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
}

function compact(date: Date): string {
  return date.toISOString().replace(/[-:.]/g, '');
}

/** `20261125T164808123Z` → `2026-11-25T16:48:08.123Z`. */
function isoOf(c: string): string {
  return `${c.slice(0, 4)}-${c.slice(4, 6)}-${c.slice(6, 8)}T${c.slice(9, 11)}:${c.slice(11, 13)}:${c.slice(13, 15)}.${c.slice(15, 18)}Z`;
}
