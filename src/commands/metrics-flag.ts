import type { ResolvedConfig } from '../config/load-config.js';
import type { JobRunResult } from '../pipeline/job-run-request.js';
import { failuresByStream } from '../pipeline/run-log.js';
import type { RunOfThisProcess } from '../report/job-metrics.js';
import type { MetricsTarget } from '../report/metrics-file.js';
import { reportPathProblem } from '../report/write-report.js';
import type { JobSettings } from '../plan/job-plan.js';
import { CommandError, ExitCode } from './exit-codes.js';

/** `--metrics-file`, shared by the commands that load. */
export interface MetricsOptions {
  /** Write the job's Prometheus metrics here when the command ends (else `metrics.file`, else none). */
  metricsFile?: string;
}

/** The flag's help, the same on every command that takes it. */
export const METRICS_FILE_HELP =
  'write the job’s Prometheus metrics to this file when the command ends (node_exporter’s textfile collector; default: metrics.file)';

/**
 * Where the command writes its metrics: the flag, else `metrics.file`, else nowhere. A path whose folder does not
 * exist is a usage error, found before anything is loaded.
 */
export function metricsTarget(
  options: MetricsOptions,
  config: ResolvedConfig,
  job: string,
  jobConfig: JobSettings,
): MetricsTarget | undefined {
  const path = options.metricsFile ?? config.metricsFile;
  if (path === undefined) return undefined;
  const flag = options.metricsFile === undefined ? `${config.file}: metrics.file` : '--metrics-file';
  const problem = reportPathProblem(path);
  if (problem) throw new CommandError(`${flag}: ${problem}`, ExitCode.usage);
  return { path, job, jobConfig, timezone: config.source.timezone };
}

/** What the metrics take from a run this process made: its id and its failed windows per stream. */
export function runOfThisProcess(result: JobRunResult | undefined): RunOfThisProcess | undefined {
  return result && { runId: result.runId, windowsFailed: failuresByStream(result) };
}
