import { rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { build } from 'esbuild';

const ROOT = resolve(import.meta.dirname, '../..');

/**
 * Builds the CLI once per test session, so that the many CLI subprocesses of the suites start as plain Node rather
 * than compiling TypeScript each time. `main` is bundled with its dependencies into one file: a subprocess then reads
 * one module instead of some hundreds, which is most of what starting one costs (about 0.25 CPU seconds instead of
 * 0.65, times several hundred runs). DuckDB's native binding stays outside, loaded the way `dist/` loads it. `bin`
 * stays a file of its own, as in `dist/`, so its settings still come before DuckDB loads. The output sits one level
 * below the root, like `dist/`, so it finds `sql/` and `package.json` the same way. Type errors are `npm run
 * typecheck`'s to find, not this build's. `host` is the same bundle with `cli-host.ts` in front: what runs a command
 * in a test's own process.
 */
export async function buildCliForTests(): Promise<{ entry: string; host: string }> {
  const outDir = join(ROOT, '.test-dist');
  rmSync(outDir, { recursive: true, force: true });
  const common = { platform: 'node', format: 'esm', target: 'node20', logLevel: 'error' } as const;
  await Promise.all([
    build({ ...common, entryPoints: [join(ROOT, 'src/cli/bin.ts')], outfile: join(outDir, 'cli/bin.js') }),
    ...[
      [join(ROOT, 'src/cli/main.ts'), join(outDir, 'cli/main.js')],
      [join(ROOT, 'test/helpers/cli-host.ts'), join(outDir, 'cli/host.js')],
    ].map(([entry, outfile]) =>
      build({
        ...common,
        entryPoints: [entry!],
        outfile,
        bundle: true,
        external: ['@duckdb/node-bindings*'],
        // the CommonJS dependencies bundled into an ES module still call `require` for Node's own modules
        banner: { js: "import { createRequire } from 'node:module'; const require = createRequire(import.meta.url);" },
      }),
    ),
  ]);
  return { entry: join(outDir, 'cli/bin.js'), host: join(outDir, 'cli/host.js') };
}
