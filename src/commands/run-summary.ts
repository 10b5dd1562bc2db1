import { CommandError, ExitCode } from '../cli/exit-codes.js';
import type { JobRunResult } from '../pipeline/run-job.js';
import { formatWindow } from '../plan/windows.js';

/** One line per stream of what a run loaded, for stdout. */
export function summarizeRun(result: JobRunResult): string {
  const byStream = new Map<string, { windows: number; loaded: number; rejected: number; extracted: number }>();
  for (const c of result.loaded) {
    const s = byStream.get(c.stream) ?? { windows: 0, loaded: 0, rejected: 0, extracted: 0 };
    s.windows++;
    s.loaded += c.loaded;
    s.rejected += c.rejected;
    s.extracted += c.extracted;
    byStream.set(c.stream, s);
  }
  const lines = [...byStream].map(
    ([stream, s]) => `${stream}: ${s.windows} window(s), ${s.extracted} records read, ${s.loaded} loaded, ${s.rejected} rejected`,
  );
  const directory = result.directory;
  if (directory.loaded.length > 0 || directory.empty > 0) {
    const read = directory.loaded.reduce((n, c) => n + c.extracted, 0);
    lines.unshift(
      `customer directory: ${directory.loaded.length} accounts window(s) read (${read} records), ${directory.empty} found empty without reading them`,
    );
  }
  if (lines.length === 0 && result.failed.length === 0) lines.push('nothing to load: every window is up to date');
  lines.push(`${result.requests} source requests, run ${result.runId}`);
  return lines.join('\n');
}

/** Throws the command's one-line failure when any window failed. */
export function failOnFailedWindows(result: JobRunResult): void {
  const first = result.failed[0];
  if (!first) return;
  throw new CommandError(
    `${result.failed.length} window(s) failed; first: ${first.stream} ${formatWindow(first.window)}: ${first.error}`,
    ExitCode.windowsFailed,
  );
}
