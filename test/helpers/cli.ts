import { spawn, type ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
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

/** Starts `loyalty-etl …` as a real process (the way a scheduler runs it), from the sources built for this test session. */
export function startCli(
  args: string[],
  env: Record<string, string | undefined> = {},
  cwd = ROOT,
): { child: ChildProcess; done: Promise<CliResult>; output: () => string } {
  const child = spawn(process.execPath, [inject('cliEntry'), ...args], {
    cwd,
    env: { ...process.env, LOYALTY_LOG_LEVEL: 'info', ...env },
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

/** Runs `loyalty-etl …` to the end. */
export function runCli(args: string[], env: Record<string, string | undefined> = {}, cwd = ROOT): Promise<CliResult> {
  return startCli(args, env, cwd).done;
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
    ? `  analysts:\n    personal_data: ${d.analysts.personal_data}\n${d.analysts.schema ? `    schema: ${d.analysts.schema}\n` : ''}`
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
        ? `destination:\n  type: duckdb\n  path: ${JSON.stringify(d.path)}\n`
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
