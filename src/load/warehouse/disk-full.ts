import { readFileSync, statfsSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { DiskFullError } from './warehouse-errors.js';

/** What a full disk stopped: the file it could not write, and the line that says so. */
export interface DiskFull {
  /** The file that could not be written, when the error names it (never for a PostgreSQL server's disk). */
  path: string | undefined;
  /** What could not be written, and where, e.g. `/data/w.duckdb.wal could not be written (on the file system …)`. */
  where: string;
  message: string;
}

export { DiskFullError };

/** PostgreSQL's SQLSTATE for a server whose disk is full. */
const PG_DISK_FULL = '53100';

/**
 * The full disk behind `error` (or any error it was caused by), or undefined when it is about something else:
 * Node's `ENOSPC`/`EDQUOT`, DuckDB's "No space left on device" (which names the file in its message), PostgreSQL's
 * `disk_full`. The line names the file, and the file system it is on with the space left there, so that whoever
 * reads it knows which disk to free.
 */
export function diskFullOf(error: unknown): DiskFull | undefined {
  let found: DiskFull | undefined;
  // the error nearest the write names the file best: a wrapper's message only quotes it
  for (let e = error as ErrorLike | undefined, depth = 0; e && depth < 5; depth++, e = e.cause as ErrorLike) {
    const full = fullOne(e);
    if (full && (found === undefined || full.path !== undefined)) found = full;
  }
  return found;
}

type ErrorLike = Error & { code?: unknown; path?: unknown; dest?: unknown };

function fullOne(e: ErrorLike): DiskFull | undefined {
  if (e instanceof DiskFullError) return e.full;
  if (e.code === PG_DISK_FULL)
    return {
      path: undefined,
      where: `the PostgreSQL server said: ${firstLine(e.message)}`,
      message: `the PostgreSQL server's disk is full (${firstLine(e.message)}); nothing of the statement that hit it was kept. Free space on the server and run again: the next run takes the windows not committed`,
    };
  const byCode = e.code === 'ENOSPC' || e.code === 'EDQUOT';
  const byMessage = typeof e.message === 'string' && /No space left on device|Disk quota exceeded/i.test(e.message);
  if (!byCode && !byMessage) return undefined;
  // a copy names its source as `path` and what it wrote as `dest`
  const written = typeof e.dest === 'string' ? e.dest : e.path;
  const path = typeof written === 'string' ? written : /(?:file|write to) "([^"]+)"/i.exec(String(e.message))?.[1];
  const where = path === undefined ? 'no space left on device' : `${path} could not be written (${diskOf(path)})`;
  return {
    path,
    where,
    message: `the disk is full: ${where}; nothing of the write that hit it was kept. Free space there and run again: the next run takes the windows not committed`,
  };
}

/** The file system `path` is on and the space left there, e.g. `on /data, 12 KB free`, as far as it can be known. */
export function diskOf(path: string): string {
  const folder = dirname(resolve(path));
  const mount = mountPointOf(folder);
  let free = '';
  try {
    const stats = statfsSync(folder);
    free = `, ${formatBytes(Number(stats.bavail) * Number(stats.bsize))} free`;
  } catch {
    // a folder that cannot be looked at has no figure to give
  }
  return `on the file system mounted at ${mount ?? folder}${free}`;
}

/** The longest mount point holding `folder` (Linux: /proc/self/mounts), or undefined elsewhere. */
function mountPointOf(folder: string): string | undefined {
  let mounts: string[];
  try {
    mounts = readFileSync('/proc/self/mounts', 'utf8')
      .split('\n')
      .map((line) => line.split(' ')[1]?.replace(/\\040/g, ' ') ?? '')
      .filter(Boolean);
  } catch {
    return undefined;
  }
  return mounts
    .filter((m) => folder === m || folder.startsWith(m.endsWith('/') ? m : `${m}/`))
    .sort((a, b) => b.length - a.length)[0];
}

function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} bytes`;
  if (bytes < 1024 ** 2) return `${(bytes / 1024).toFixed(0)} KB`;
  if (bytes < 1024 ** 3) return `${(bytes / 1024 ** 2).toFixed(1)} MB`;
  return `${(bytes / 1024 ** 3).toFixed(1)} GB`;
}

function firstLine(text: string): string {
  return text.split('\n')[0]!;
}
