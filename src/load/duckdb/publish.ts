import { copyFile, mkdir, readdir, rm, stat } from 'node:fs/promises';
import { constants } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { withDuckDb } from './duckdb-connection.js';
import type { AnalystsPolicy } from '../../plan/job-plan.js';
import type { PublishedCopy } from '../destination.js';
import { rewriteForAnalysts } from './analyst-copy.js';
import { leavePipelineTablesOut } from './copy-scope.js';
import { replaceFile, replaceWorkDirOf } from '../export/replace-file.js';
import type { SqlConnection } from '../warehouse/sql-connection.js';
import { PublishError } from '../warehouse/warehouse-errors.js';

/** The warehouse a copy is published from: its file, and a way to hold its writers off for a moment. */
export interface PublishSource {
  readonly path: string;
  /** Runs `fn` on a connection while no commit of the process can start. */
  whileQuiet<T>(fn: (conn: SqlConnection) => Promise<T>): Promise<T>;
}

/**
 * Publishes a consistent, read-only copy of a DuckDB warehouse for readers, replacing the previous one atomically.
 *
 * A DuckDB file belongs to the one process that writes it, so analysts read a copy instead. With the process's
 * writers held off, `CHECKPOINT` writes every committed row into the file (the write-ahead log is then empty),
 * and the file is copied as it stands: a copy of a checkpointed file is the database at that commit, and far
 * cheaper than DuckDB's `COPY FROM DATABASE`, which writes every row again. The copy is written through {@link replaceFile} (a folder of its own beside the
 * published path, so a planted link is never followed, and only a regular file is ever replaced), opened
 * read-only once to prove it is a database, given the warehouse's read bits only, flushed, and renamed over the
 * published path: a new reader opens the new copy, and a reader that has the old
 * one open keeps reading it (the rename leaves its file in place until it closes), so no reader ever blocks
 * the pipeline, and none sees a copy half-written.
 *
 * @example
 * const copy = await publishWarehouse(destination, './warehouse.published.duckdb');
 * copy.bytes // the size of the file readers open
 */
export async function publishWarehouse(
  source: PublishSource,
  target: string,
  analysts: AnalystsPolicy = { personalData: 'keep' },
): Promise<PublishedCopy> {
  const path = resolve(target);
  if (path === resolve(source.path)) throw new PublishError(`the publish path ${path} is the warehouse itself`);
  const started = performance.now();
  let heldSeconds = 0;
  let rewrite: PublishedCopy['rewrite'];
  try {
    await mkdir(dirname(path), { recursive: true });
    await removeAbandonedCopies(path);
    // a reader that opens it read-write would lock the others out, so no write bit; and no one may read the copy
    // who may not read the warehouse (under umask 077 it is 0600, and its copy 0400)
    const mode = (await stat(source.path)).mode & 0o444;
    await replaceFile(path, {
      mode,
      fill: async (temporary) => {
        const heldFrom = performance.now();
        await source.whileQuiet(async (conn) => {
          await conn.run('CHECKPOINT');
          // a clone where the file system shares blocks (btrfs, XFS), else a copy in the kernel
          await copyFile(source.path, temporary, constants.COPYFILE_FICLONE | constants.COPYFILE_EXCL);
        });
        heldSeconds = (performance.now() - heldFrom) / 1000;
        // what analysts may read of personal data (destination.analysts.personal_data)
        // started from the copy readers have now, which is replaced only once this one is written
        rewrite = await rewriteForAnalysts(temporary, analysts, path);
        // a copy of the warehouse as it stands (keep) holds the pipeline's own tables, unless they are asked for
        if (rewrite === undefined) await leavePipelineTablesOut(temporary, analysts.pipelineTables === true);
        await proveReadable(temporary);
      },
    });
    return {
      path,
      bytes: (await stat(path)).size,
      seconds: (performance.now() - started) / 1000,
      heldSeconds,
      ...(rewrite ? { rewrite } : {}),
    };
  } catch (error) {
    throw error instanceof PublishError
      ? error
      : new PublishError(`could not publish ${path}: ${(error as Error).message}`, { cause: error });
  }
}

/** Opens the copy as a reader would, so a copy DuckDB cannot open never replaces a good one. */
async function proveReadable(file: string): Promise<void> {
  await withDuckDb(file, { access_mode: 'READ_ONLY' }, (conn) => conn.run('SELECT COUNT(*) FROM duckdb_tables()'));
}

/** Deletes copies that a publish killed half-way left behind (their process is gone): each is a warehouse's size. */
async function removeAbandonedCopies(path: string): Promise<void> {
  const legacyPrefix = `${basename(path)}.tmp-`; // the name copies had before they were written in a folder of their own
  for (const name of await readdir(dirname(path))) {
    const pid =
      replaceWorkDirOf(path, name)?.pid ??
      (name.startsWith(legacyPrefix) ? Number(name.slice(legacyPrefix.length)) : NaN);
    if (Number.isInteger(pid) && pid !== process.pid && !isAlive(pid))
      await rm(join(dirname(path), name), { recursive: true, force: true });
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
