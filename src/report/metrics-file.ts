import { writeFile } from 'node:fs/promises';
import type { Destination } from '../load/destination.js';
import { replaceFile } from '../load/export/replace-file.js';
import type { Logger } from '../log/logger.js';
import { lastClosedDay } from '../plan/days.js';
import type { JobSettings } from '../plan/job-plan.js';
import { jobMetrics, type RunOfThisProcess } from './job-metrics.js';

/** Where a load writes the job's metrics when it ends (`--metrics-file`, `metrics.file`). */
export interface MetricsTarget {
  /** The file, replaced whole: name it `*.prom` in node_exporter's textfile directory. */
  path: string;
  job: string;
  jobConfig: JobSettings;
  /** `source.timezone`: the lag counts to the last closed day there. */
  timezone: string;
}

/** The job's metrics as Prometheus text, read from the warehouse. */
export async function metricsText(
  destination: Destination,
  target: Omit<MetricsTarget, 'path'>,
  run?: RunOfThisProcess,
  /** OpenMetrics text instead of Prometheus' (a scraper that asks for it). */
  openMetrics = false,
): Promise<{ contentType: string; text: string }> {
  const registry = await destination.withConnection((conn) =>
    jobMetrics(conn, {
      job: target.job,
      jobConfig: target.jobConfig,
      lastClosedDay: lastClosedDay(target.timezone),
      ...(run ? { run } : {}),
      openMetrics,
    }),
  );
  return { contentType: registry.contentType, text: await registry.metrics() };
}

/**
 * Writes the job's metrics to the target as node_exporter's textfile collector expects: written beside it and
 * renamed over it ({@link replaceFile}), so a scrape never reads half a file.
 */
export async function writeMetricsFile(
  destination: Destination,
  target: MetricsTarget,
  run?: RunOfThisProcess,
): Promise<void> {
  const { text } = await metricsText(destination, target, run);
  await replaceFile(target.path, { fill: (temporary) => writeFile(temporary, text, { flag: 'wx' }) });
}

/**
 * Runs `work` (a load of the job), then writes the metrics, whether it succeeded or not: a failed night is what
 * an alert must see. When the work threw, its error is the one that counts, and metrics not written are logged.
 */
export async function metricsAfter<T>(
  target: MetricsTarget | undefined,
  destination: Destination,
  logger: Logger,
  runOf: (value: T | undefined, error?: unknown) => RunOfThisProcess | undefined,
  work: () => Promise<T>,
): Promise<T> {
  if (!target) return work();
  const write = (value: T | undefined, error?: unknown) =>
    writeMetricsFile(destination, target, runOf(value, error)).then(
      () => logger.debug({ metrics: target.path }, 'metrics written'),
      (error: unknown) => logger.warn({ metrics: target.path, err: error }, 'metrics not written'),
    );
  let value: T;
  try {
    value = await work();
  } catch (error) {
    await write(undefined, error);
    throw error;
  }
  await write(value);
  return value;
}
