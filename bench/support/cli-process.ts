import { execFile, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';

const ROOT = resolve(import.meta.dirname, '../..');
/** Compiled sources for the bench's `loyalty-etl` processes, one level below the root like `dist/` (so `sql/` is found). */
const OUT_DIR = join(ROOT, '.bench-dist');

let built: Promise<string> | undefined;

/**
 * Compiles `src/` once per bench (as `npm run build` does, into `.bench-dist/`), so the measured processes run
 * plain JavaScript: no compiler in their memory or their time.
 */
export function buildCli(): Promise<string> {
  built ??= (async () => {
    rmSync(OUT_DIR, { recursive: true, force: true });
    const tsc = join(ROOT, 'node_modules/typescript/bin/tsc');
    await promisify(execFile)(
      process.execPath,
      [
        tsc,
        '-p',
        join(ROOT, 'tsconfig.build.json'),
        '--outDir',
        OUT_DIR,
        '--declaration',
        'false',
        '--sourceMap',
        'false',
      ],
      { cwd: ROOT },
    );
    return join(OUT_DIR, 'cli/bin.js');
  })();
  return built;
}

/** How a `loyalty-etl` process ended, how long it took and the most memory it held. */
export interface CliRun {
  code: number | null;
  /** The signal that ended the process, if one did. */
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  /** From spawn to exit. */
  seconds: number;
  /** VmHWM of the process at exit (bytes): its peak resident set. */
  peakRssBytes: number;
  /** User and system CPU time of the process over its whole life, all of its threads. */
  cpuSeconds: number;
}

/**
 * Runs `loyalty-etl <args>` as a process of its own, as a scheduler or a data engineer would, and reads its
 * peak resident set (VmHWM) and CPU time as it exits. Extra `nodeOptions` (e.g. `--cpu-prof`) go to that process only.
 */
export async function runCli(
  args: string[],
  env: Record<string, string> = {},
  nodeOptions: string[] = [],
  timeoutMs = 15 * 60_000,
): Promise<CliRun> {
  const entry = await buildCli();
  const dir = mkdtempSync(join(tmpdir(), 'loyalty-bench-'));
  const rssFile = join(dir, 'peak-rss');
  const started = performance.now();
  const child = spawn(
    process.execPath,
    [...nodeOptions, '--import', join(import.meta.dirname, 'peak-rss-reporter.mjs'), entry, ...args],
    {
      cwd: ROOT,
      // the salt of the default personal-data policy (hash), as a user's warehouse has one
      env: {
        ...withoutOverrides(process.env),
        LOYALTY_LOG_LEVEL: 'info',
        LOYALTY_PII_SALT: 'bench salt',
        ...env,
        BENCH_PEAK_RSS_FILE: rssFile,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => (stdout += d));
  child.stderr.on('data', (d) => (stderr += d));
  // a run that hangs fails the bench instead of holding it forever
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((done) =>
    child.on('close', (c, s) => done([c, s])),
  );
  clearTimeout(timer);
  const seconds = (performance.now() - started) / 1000;
  // no file when the process was killed before it could exit by itself
  const exit = existsSync(rssFile)
    ? (JSON.parse(readFileSync(rssFile, 'utf8')) as { peakRssKb: number | null; cpuMicros: number })
    : undefined;
  rmSync(dir, { recursive: true, force: true });
  return {
    code,
    signal,
    stdout,
    stderr,
    seconds,
    peakRssBytes: (exit?.peakRssKb ?? Number.NaN) * 1024,
    cpuSeconds: (exit?.cpuMicros ?? Number.NaN) / 1e6,
  };
}

/** The environment without `LOYALTY_*` variables: the bench's jobs file says where to load, not the shell. */
function withoutOverrides(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(env).filter(([key]) => !key.startsWith('LOYALTY_')));
}
