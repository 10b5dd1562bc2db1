import { existsSync, mkdirSync, statSync } from 'node:fs';
import { dirname } from 'node:path';

/**
 * The warehouse as configured cannot be used: a DuckDB path that is no DuckDB database or whose directory cannot
 * be made, or — for the commands that only look at a warehouse (`check`, `status`, `verify`) — one that does not
 * exist yet. A mistake of the configuration (`destination`, `LOYALTY_WAREHOUSE`), not of the warehouse.
 */
export class WarehouseConfigError extends Error {
  override readonly name = 'WarehouseConfigError';
}

/**
 * The warehouse was migrated or written by a newer release of loyalty-etl than this one: it is left untouched, as
 * this release could read its tables wrongly or undo what the newer one wrote.
 */
export class WarehouseNewerError extends Error {
  override readonly name = 'WarehouseNewerError';
}

/**
 * Makes the directory of the warehouse file `file` and any missing parent, one at a time. Node's own recursive
 * mkdir never returns for a path it cannot make under some file systems (`/proc/x/w.duckdb` spun a core for ten
 * minutes); here the first directory that cannot be made ends it with its reason.
 *
 * @throws WarehouseConfigError naming the directory and why it cannot be made.
 */
export function makeWarehouseDirectory(file: string): void {
  const missing: string[] = [];
  let dir = dirname(file);
  while (!existsSync(dir)) {
    missing.push(dir);
    const parent = dirname(dir);
    if (parent === dir) break;
    dir = parent;
  }
  if (missing.length === 0 && !statSync(dir).isDirectory())
    throw new WarehouseConfigError(`warehouse ${file}: ${dir} is not a directory`);
  for (const d of missing.reverse()) {
    try {
      mkdirSync(d);
    } catch (error) {
      const e = error as NodeJS.ErrnoException;
      throw new WarehouseConfigError(`warehouse ${file}: cannot create the directory ${d} (${e.code ?? e.message})`);
    }
  }
}

/**
 * Whether a statement failed because of the values it was given (a value out of range, text a JSON column
 * refuses), so that running it again with the same values fails again; anything else (a connection lost, a disk
 * full) may work later. PostgreSQL says so by SQLSTATE (class 22, data exception; class 23 but a unique key;
 * 54, a program limit such as a JSON nested too deep); DuckDB by the kind of error its message starts with.
 */
export function isDataError(error: unknown): boolean {
  const e = error as { code?: unknown; message?: unknown } | null;
  if (typeof e?.code === 'string' && /^[0-9A-Z]{5}$/.test(e.code))
    return /^(22|54)/.test(e.code) || (e.code.startsWith('23') && e.code !== '23505');
  return typeof e?.message === 'string' && /^(Conversion|Invalid Input|Out of Range) Error/.test(e.message);
}

/**
 * A statement of the pipeline waited its longest (`destination.busy_timeout_s`) for a lock another session holds:
 * the message names the holder, so that whoever reads it can end that session or wait for it.
 */
export class WarehouseLockTimeoutError extends Error {
  override readonly name = 'WarehouseLockTimeoutError';
}
