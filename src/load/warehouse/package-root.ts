import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import semver from 'semver';

/**
 * Folder of the DDL files: `sql/` at the package root, the nearest above this module, so that it is found wherever
 * the build put the module (`src/load/warehouse`, `dist/load/warehouse`, or one bundled file).
 */
export const SQL_DIR = sqlDirAbove(fileURLToPath(import.meta.url));

function sqlDirAbove(file: string): string {
  for (let dir = dirname(file); ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'sql', 'duckdb'))) return join(dir, 'sql') + sep;
    if (dirname(dir) === dir) throw new Error(`no sql/duckdb folder above ${file}: the package is incomplete`);
  }
}

/** The release of loyalty-etl this code is: `version` of the package.json beside `sql/`. */
export const RELEASE: string = readRelease();

function readRelease(): string {
  const { version } = JSON.parse(readFileSync(`${SQL_DIR}..${sep}package.json`, 'utf8')) as { version?: unknown };
  if (typeof version !== 'string' || !semver.valid(version))
    throw new Error(`package.json beside ${SQL_DIR} holds no semantic version: the package is incomplete`);
  return version;
}

/** Whether `version`, a release a warehouse recorded, is newer than `release`; text that is no version counts as newer. */
export function isNewerRelease(version: string, release: string = RELEASE): boolean {
  return semver.valid(version) === null || semver.gt(version, release);
}
