import { statSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import type { JobSettings } from '../plan/job-plan.js';
import type { Destination } from '../load/destination.js';
import { replaceFile, replaceProblem } from '../load/export/replace-file.js';
import type { Logger } from '../log/logger.js';
import type { Day } from '../plan/days.js';
import { readReportModel } from './read-report-model.js';
import { renderReportPage } from './render-page.js';

/** Which page to write where. */
export interface ReportTarget {
  /** The HTML file to write (replaced whole). */
  path: string;
  job: string;
  jobConfig: JobSettings;
  /** `source.timezone`. */
  timezone: string;
  /** The last day of the grid: the last closed day (read again at each write when it is a function). */
  through: Day | (() => Day);
  /** Seconds after which a browser reloads the page; none by default. */
  refreshSeconds?: number;
  /** Put the rejected records' payloads and errors on the page (they hold customer data); off by default. */
  rejectPayloads?: boolean;
}

/** What a write produced. */
export interface WrittenReport {
  path: string;
  bytes: number;
  windows: number;
}

/**
 * Why `path` cannot take the page (its folder is missing, or it is a folder), or undefined when it can. Checked
 * before a run loads anything, so a wrong path fails at once rather than after the night's work.
 */
export function reportPathProblem(path: string): string | undefined {
  const folder = dirname(resolve(path));
  const dir = statSync(folder, { throwIfNoEntry: false });
  if (!dir?.isDirectory()) return `${path}: folder ${folder} does not exist`;
  if (statSync(path, { throwIfNoEntry: false })?.isDirectory()) return `${path} is a folder, not a file`;
  return replaceProblem(path);
}

/**
 * Reads the warehouse and writes the page, through {@link replaceFile}: whole (a web server serving it never
 * sends half a page), only over a regular file, never through a planted link.
 */
export async function writeReport(destination: Destination, target: ReportTarget): Promise<WrittenReport> {
  const through = typeof target.through === 'function' ? target.through() : target.through;
  const model = await destination.withConnection((conn) =>
    readReportModel(conn, {
      job: target.job,
      jobConfig: target.jobConfig,
      schema: destination.schema,
      warehouse: destination.describe(),
      timezone: target.timezone,
      through,
    }),
  );
  const page = renderReportPage(model, {
    refreshSeconds: target.refreshSeconds,
    rejectPayloads: target.rejectPayloads,
  });
  await replaceFile(target.path, { fill: (temporary) => writeFile(temporary, page, { flag: 'wx' }) });
  return {
    path: target.path,
    bytes: Buffer.byteLength(page),
    windows: model.streams.reduce((n, s) => n + s.windows.length, 0),
  };
}

/**
 * Runs `work` (a run of the job), then rewrites the page, whether the run succeeded or not: a failed night is
 * when the page matters most. When the run threw, the run's error is the one that counts, and a page that could
 * not be written as well is logged.
 */
export async function reportAfter<T>(
  target: ReportTarget | undefined,
  destination: Destination,
  logger: Logger,
  work: () => Promise<T>,
): Promise<T> {
  if (!target) return work();
  let result: T;
  try {
    result = await work();
  } catch (error) {
    await writeReport(destination, target).then(
      (written) => logger.info({ report: written.path, bytes: written.bytes }, 'report written'),
      (reportError: unknown) => logger.warn({ report: target.path, err: reportError }, 'report not written'),
    );
    throw error;
  }
  const written = await writeReport(destination, target);
  logger.info({ report: written.path, bytes: written.bytes }, 'report written');
  return result;
}
