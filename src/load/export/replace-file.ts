import { constants, lstatSync, type Stats } from 'node:fs';
import { chmod, lstat, mkdtemp, open, rename, rm } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { UnsafeTargetError } from '../warehouse/warehouse-errors.js';

/** What a path holds, in words, when it is anything but a regular file; undefined for a regular file or nothing. */
export function notARegularFile(info: Stats | undefined): string | undefined {
  if (!info || info.isFile()) return undefined;
  if (info.isSymbolicLink()) return 'a symbolic link';
  if (info.isDirectory()) return 'a folder';
  if (info.isFIFO()) return 'a FIFO';
  if (info.isCharacterDevice() || info.isBlockDevice()) return 'a device';
  if (info.isSocket()) return 'a socket';
  return 'not a regular file';
}

/** Why `path` may not be replaced by {@link replaceFile}, or undefined when it may (a regular file, or nothing yet). */
export function replaceProblem(path: string): string | undefined {
  const what = notARegularFile(lstatSync(path, { throwIfNoEntry: false }));
  return what === undefined ? undefined : `${path} is ${what}, not a regular file: it is left as it is`;
}

/** How {@link replaceFile} fills and finishes the new file. */
export interface ReplaceOptions {
  /** Writes the new content at `temporary`, a path no one else can have made or linked (it does not exist yet). */
  fill: (temporary: string) => Promise<void>;
  /** Permission bits of the new file; by default those of the file it replaces, else 0666 less the umask. */
  mode?: number;
}

/**
 * Replaces the regular file at `target` (or creates it) whole and atomically, and only where it is meant to go.
 *
 * The new content is written in a folder made for it beside the target (`mkdtemp`: a name no one can guess,
 * created exclusively, mode 0700, so no other user can plant a link or a file in it), flushed, given its mode and
 * renamed over the target: a reader sees the old file or the new one, never half of one, and a link planted
 * where a temporary file of a predictable name would have gone is never followed. The target itself must be a
 * regular file or nothing: a FIFO, a device, a folder or a symbolic link at that path is left as it is, and
 * {@link UnsafeTargetError} says what it is. Nothing of the attempt stays behind when it fails.
 *
 * @example await replaceFile('report.html', { fill: (tmp) => writeFile(tmp, page, { flag: 'wx' }) });
 */
export async function replaceFile(target: string, options: ReplaceOptions): Promise<void> {
  const path = resolve(target);
  const before = await lstat(path).catch(() => undefined);
  const what = notARegularFile(before);
  if (what !== undefined) throw new UnsafeTargetError(`${target} is ${what}, not a regular file: it is left as it is`);
  const workDir = await mkdtemp(join(dirname(path), `.${basename(path)}.tmp-${process.pid}-`));
  try {
    const temporary = join(workDir, basename(path));
    await options.fill(temporary);
    // the fill may have used any API; what it left must still be a file of ours, not a link to somewhere else
    const written = await lstat(temporary);
    if (!written.isFile()) throw new UnsafeTargetError(`${temporary} is not a regular file after writing it`);
    const handle = await open(temporary, constants.O_RDONLY | constants.O_NOFOLLOW);
    try {
      await handle.sync();
    } finally {
      await handle.close();
    }
    const mode = options.mode ?? (before ? before.mode & 0o7777 : undefined);
    if (mode !== undefined) await chmod(temporary, mode);
    // the target may have changed while the content was written: looked at again just before it is replaced
    const now = notARegularFile(await lstat(path).catch(() => undefined));
    if (now !== undefined) throw new UnsafeTargetError(`${target} is ${now}, not a regular file: it is left as it is`);
    await rename(temporary, path);
    const dir = await open(dirname(path), 'r');
    await dir.sync().finally(() => dir.close());
  } finally {
    await rm(workDir, { recursive: true, force: true }).catch(() => undefined);
  }
}

/** Whether a name beside `target` is a folder {@link replaceFile} made for it, and the process that made it. */
export function replaceWorkDirOf(target: string, name: string): { pid: number } | undefined {
  const prefix = `.${basename(target)}.tmp-`;
  if (!name.startsWith(prefix)) return undefined;
  const pid = Number(name.slice(prefix.length).split('-')[0]);
  return Number.isInteger(pid) && pid > 0 ? { pid } : undefined;
}
