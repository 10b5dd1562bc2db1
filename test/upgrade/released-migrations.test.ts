import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { splitStatements } from '../../src/load/warehouse/migrate.js';
import { git } from '../helpers/release-build.js';
import { RELEASES } from './releases.js';

const ROOT = resolve(import.meta.dirname, '../..');

describe('migrations that shipped', () => {
  it.each(RELEASES)(
    'every migration of $version holds the same statements today (a shipped migration is never edited)',
    ({ version, commit }) => {
      const files = git(['ls-tree', '--name-only', commit, 'sql/duckdb/', 'sql/postgres/'], `release ${version}`)
        .toString()
        .split('\n')
        .filter((f) => f.endsWith('.sql'));
      expect(files.length).toBeGreaterThan(0);
      for (const file of files) {
        const now = join(ROOT, file);
        expect(existsSync(now), `${file} of ${version} was removed`).toBe(true);
        const then = git(['show', `${commit}:${file}`], `release ${version}`).toString();
        expect(splitStatements(readFileSync(now, 'utf8')), `${file} of ${version} was edited`).toEqual(
          splitStatements(then),
        );
      }
    },
  );
});
