import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { build } from 'esbuild';

const ROOT = resolve(import.meta.dirname, '../..');

/** Runs git in the repository, failing with what a checkout lacks when the history is not there. */
export function git(args: string[], what: string): Buffer {
  try {
    return execFileSync('git', ['-C', ROOT, ...args], { maxBuffer: 256 * 2 ** 20, stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (error) {
    throw new Error(
      `${what}: git ${args.join(' ')} failed (${(error as Error).message.split('\n')[0]}); the upgrade tests need the repository's history (a clone that is not shallow)`,
    );
  }
}

/**
 * Builds the command line of a past release from the repository's history: its `src/`, `sql/` and `package.json` at
 * `commit`, bundled the way the tests bundle today's (`build-cli.ts`), against today's `node_modules`. Returns the
 * entry a test starts with `node`. Built once per commit and kept in `.test-dist-releases/`.
 */
export async function buildRelease(version: string, commit: string): Promise<string> {
  const dir = join(ROOT, '.test-dist-releases', `${version}-${commit.slice(0, 12)}`);
  const entry = join(dir, 'dist', 'cli', 'bin.js');
  if (existsSync(entry)) return entry;
  rmSync(dir, { recursive: true, force: true });
  const source = join(dir, 'source');
  mkdirSync(source, { recursive: true });
  const archive = git(['archive', '--format=tar', commit, 'src', 'sql', 'package.json'], `release ${version}`);
  const tar = join(dir, 'source.tar');
  writeFileSync(tar, archive);
  execFileSync('tar', ['-xf', tar, '-C', source]);
  rmSync(tar);
  // the built release finds sql/ and package.json above itself, as an installed one finds them above dist/
  execFileSync('cp', ['-r', join(source, 'sql'), join(source, 'package.json'), dir]);
  await build({
    platform: 'node',
    format: 'esm',
    target: 'node20',
    logLevel: 'error',
    entryPoints: [join(source, 'src/cli/bin.ts')],
    outfile: entry,
    bundle: true,
    nodePaths: [join(ROOT, 'node_modules')],
    external: ['@duckdb/node-bindings*'],
    banner: { js: "import { createRequire } from 'node:module'; const require = createRequire(import.meta.url);" },
  });
  return entry;
}
