import { execFile } from 'node:child_process';
import { rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';

const ROOT = resolve(import.meta.dirname, '../..');

/**
 * Compiles the sources once per test session, so that the many CLI subprocesses of the suites start as plain
 * Node (a fraction of a second) rather than compiling TypeScript each time. The output sits one level below
 * the root, like `dist/`, so it finds `sql/` the same way.
 */
export async function buildCliForTests(): Promise<string> {
  const outDir = join(ROOT, '.test-dist');
  rmSync(outDir, { recursive: true, force: true });
  const tsc = join(ROOT, 'node_modules/typescript/bin/tsc');
  await promisify(execFile)(
    process.execPath,
    [
      tsc,
      '-p',
      join(ROOT, 'tsconfig.build.json'),
      '--outDir',
      outDir,
      '--declaration',
      'false',
      '--sourceMap',
      'false',
    ],
    { cwd: ROOT },
  );
  return join(outDir, 'cli/bin.js');
}
