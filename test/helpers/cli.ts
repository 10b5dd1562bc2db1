import { spawn, type ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { inject } from 'vitest';
import type { DestinationSettings } from '../../src/plan/job-plan.js';
import { testTempDir } from './temp-dir.js';

const ROOT = resolve(import.meta.dirname, '../..');

export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/**
 * Starts `loyalty-etl …` as a real process (the way a scheduler runs it), from the sources built for this test session
 * (or from `entry`, another build: a past release's).
 */
export function startCli(
  args: string[],
  env: Record<string, string | undefined> = {},
  cwd = ROOT,
  entry: string = inject('cliEntry'),
): { child: ChildProcess; done: Promise<CliResult>; output: () => string } {
  const child = spawn(process.execPath, [entry, ...args], {
    cwd,
    env: cliEnv(env),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (d) => (stdout += d));
  child.stderr!.on('data', (d) => (stderr += d));
  const done = new Promise<CliResult>((resolveDone) =>
    child.on('close', (code, signal) => resolveDone({ code, signal, stdout, stderr })),
  );
  return { child, done, output: () => stdout + stderr };
}

/**
 * Runs `loyalty-etl …` to the end in the test's own process: the same bundle, arguments, environment and working
 * directory as a subprocess, its stdout and stderr captured (see `cli-host.ts` for what is isolated), without the
 * cost of starting Node and loading the CLI again (about 0.25 of the 0.64 CPU seconds of a `run` with nothing to
 * load, and the CLI's code warm after the first run).
 *
 * Use {@link runCliProcess} or {@link startCli} instead where the process boundary is what the test checks or needs:
 * a signal or a kill, a real process's exit or stdio, a run beside another CLI or reader on the same warehouse (locks
 * hold between processes, not within one), a server left running, output timed against the test's own emulator
 * (which shares this process's thread), or two commands at once (refused here).
 */
export async function runCli(
  args: string[],
  env: Record<string, string | undefined> = {},
  cwd = ROOT,
): Promise<CliResult> {
  const { runHosted } = await loadHost();
  const result = await runHosted([process.execPath, inject('cliEntry'), ...args], cliEnv(env), cwd);
  return { ...result, signal: null };
}

/** Runs `loyalty-etl …` to the end as a process of its own (see {@link runCli} for when). */
export function runCliProcess(
  args: string[],
  env: Record<string, string | undefined> = {},
  cwd = ROOT,
  entry?: string,
): Promise<CliResult> {
  return startCli(args, env, cwd, entry).done;
}

/** The environment a CLI run gets: the test's, at the log level `info` unless told, with `env`'s keys over it. */
function cliEnv(env: Record<string, string | undefined>): Record<string, string> {
  const all: Record<string, string> = {};
  for (const [key, value] of Object.entries({ ...process.env, LOYALTY_LOG_LEVEL: 'info', ...env }))
    if (value !== undefined) all[key] = value;
  return all;
}

let host: Promise<typeof import('./cli-host.js')> | undefined;

/** The host bundle, loaded once per test file's worker (vitest leaves `.test-dist/` to Node: vitest.config.ts). */
function loadHost(): Promise<typeof import('./cli-host.js')> {
  return (host ??= import(pathToFileURL(inject('cliHost')).href) as Promise<typeof import('./cli-host.js')>);
}

/** Writes a jobs file into a fresh temp directory and returns its path. */
export function writeJobsFile(text: string): string {
  const file = join(testTempDir('jobs-'), 'jobs.yaml');
  writeFileSync(file, text);
  return file;
}

/** A jobs file for the emulator: one job `nightly` over `streams`. */
export function emulatorJobs(options: {
  url: string;
  timezone: string;
  firstDay: string;
  destination?: DestinationSettings;
  streams?: string[];
  windowDays?: number;
  lookbackDays?: number;
  pageSize?: number;
  extraSource?: string;
  /** Source keys that replace the defaults below (`retries`, `timeout_ms`, `backoff_base_ms`, …). */
  sourceKeys?: Record<string, string | number>;
  /**
   * `source.history_start`: by default the job's first day, where the suites' emulated programs start, so the
   * customer directory before it is empty; null leaves the key out (the config's default applies).
   */
  historyStart?: string | null;
  postings?: string;
}): string {
  const d = options.destination;
  const historyStart =
    options.historyStart === undefined
      ? { history_start: options.firstDay }
      : options.historyStart === null
        ? {}
        : { history_start: options.historyStart };
  const sourceKeys = {
    page_size: options.pageSize ?? 50,
    concurrency: 4,
    requests_per_second: 1000,
    retries: 2,
    timeout_ms: 10000,
    ...historyStart,
    ...options.sourceKeys,
  };
  const analysts = d?.analysts
    ? `  analysts:\n    personal_data: ${d.analysts.personal_data}\n${d.analysts.schema ? `    schema: ${d.analysts.schema}\n` : ''}` +
      (d.analysts.schema_contract ? `    schema_contract: ${d.analysts.schema_contract}\n` : '') +
      (d.analysts.pipeline_tables === undefined ? '' : `    pipeline_tables: ${d.analysts.pipeline_tables}\n`)
    : '';
  const archive =
    d?.archive === false
      ? '  archive: false\n'
      : d?.archive?.path
        ? `  archive:\n    path: ${JSON.stringify(d.archive.path)}\n`
        : '';
  const destination = !d
    ? ''
    : (d.type === 'duckdb'
        ? `destination:\n  type: duckdb\n  path: ${JSON.stringify(d.path)}\n` +
          (d.publish_path === undefined ? '' : `  publish_path: ${JSON.stringify(d.publish_path)}\n`)
        : `destination:\n  type: postgres\n  url: ${JSON.stringify(d.url)}\n  schema: ${d.schema}\n`) +
      analysts +
      archive;
  return writeJobsFile(`
source:
  base_url: ${options.url}
  timezone: ${options.timezone}
${Object.entries(sourceKeys)
  .map(([key, value]) => `  ${key}: ${value}`)
  .join('\n')}
${options.extraSource ?? ''}
${destination}
jobs:
  nightly:
    streams: [${(options.streams ?? ['accounts']).join(', ')}]
    window_days: ${options.windowDays ?? 1}
    lookback_days: ${options.lookbackDays ?? 0}
    first_day: ${options.firstDay}
${options.postings ?? ''}
`);
}
