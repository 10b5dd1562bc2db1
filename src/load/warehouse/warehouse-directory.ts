import { existsSync, mkdirSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import { WarehouseConfigError } from './warehouse-errors.js';

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
