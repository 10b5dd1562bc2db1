import { isoDay } from '../config/config-schema.js';
import { CommandError, ExitCode } from './exit-codes.js';
import { incrementalWindows } from '../pipeline/incremental-windows.js';
import { runJob } from '../pipeline/run-job.js';
import { lastClosedDay } from '../plan/days.js';
import {
  commandLogger,
  createApi,
  createArchive,
  pruneArchive,
  resolveJob,
  type CommonOptions,
} from './job-session.js';
import { describeSession, failIfUnpublished, usingLoadSession } from './load-session.js';
import { interruptibleRun } from './interruption.js';
import { failOnFailedWindows, runJson, summarizeRun } from './run-summary.js';
import { reportAfter } from '../report/write-report.js';
import { reportTarget } from './report.js';
import type { Command } from 'commander';
import { withJobFlags } from './shared-flags.js';
import { createProgress, showsProgressBar } from './progress-display.js';
import { randomUUID } from 'node:crypto';
import { metricsAfter } from '../report/metrics-file.js';
import { SourceGoneError } from '../pipeline/pipeline-errors.js';
import { METRICS_FILE_HELP, metricsTarget, runOfThisProcess, type MetricsOptions } from './metrics-flag.js';
import type { JobRunResult } from '../pipeline/job-run-request.js';
import type { StreamName } from '../plan/job-plan.js';

export interface RunOptions extends CommonOptions, MetricsOptions {
  /** The summary on stdout as one JSON object. */
  json?: boolean;
  /** Last day to load instead of the last closed day in the source's zone (re-running up to a given night). */
  until?: string;
  /** Rewrite the status page at this path after the run. */
  report?: string;
}

/**
 * `loyalty-etl run`: every stream of the job from its watermark, less the look-back, to the last closed day in
 * the source's zone; a job without a watermark starts at its first day. One run per job at a time: a second
 * one while the first lives exits with code 3 (the run lock, `run:<job>` in `_etl_locks`).
 */
export async function runCommand(options: RunOptions): Promise<void> {
  const { config, job, jobConfig, plan } = resolveJob(options);
  if (options.until !== undefined && !isoDay.safeParse(options.until).success)
    throw new CommandError(`--until: ${options.until} is not a day YYYY-MM-DD`, ExitCode.usage);
  const through = options.until ?? lastClosedDay(config.source.timezone);
  const report =
    options.report === undefined
      ? undefined
      : reportTarget({ flag: '--report', path: options.report, config, job, jobConfig, until: options.until });
  const metrics = metricsTarget(options, config, job, jobConfig);
  // On a terminal a progress bar is the display; log lines below warnings would only scroll it away.
  const bar = showsProgressBar();
  const logger = commandLogger(bar && !process.env.LOYALTY_LOG_LEVEL ? { level: 'warn' } : {});
  const api = createApi(config, logger);
  const archive = createArchive(config);
  const started = performance.now();
  const runId = randomUUID();
  const summary = (result: JobRunResult, notAttempted?: ReadonlyMap<StreamName, number>) => {
    const seconds = (performance.now() - started) / 1000;
    return options.json ? runJson(result, seconds, notAttempted) : `${summarizeRun(result, seconds, notAttempted)}\n`;
  };
  const session = await usingLoadSession(config, logger, async (destination) => {
    const windows = await incrementalWindows(destination, job, jobConfig, through);
    const total = [...windows.values()].reduce((n, w) => n + w.length, 0);
    // a bar on a terminal; for a scheduler, a `run progress` log line every few seconds, as backfill writes
    const progress = createProgress({ label: 'run', total, done: 0, stream: process.stderr, bar, logger });
    let done = 0;
    let records = 0;
    const ownRun = (value: JobRunResult | undefined, error?: unknown) =>
      runOfThisProcess(value ?? (error instanceof SourceGoneError ? error.result : undefined));
    return metricsAfter(metrics, destination, logger, ownRun, () =>
      reportAfter(report, destination, logger, () =>
        runJob({
          plan,
          runId,
          command: 'run',
          work: { kind: 'planned', windows },
          exclusive: true,
          concurrency: plan.sourceConcurrency,
          api,
          destination,
          archive,
          logger,
          stop: interruptibleRun(),
          onSpanDone: (_stream, counts) => {
            done += counts.length;
            records += counts.reduce((n, c) => n + c.extracted, 0);
            progress.update(done, records);
          },
          onCustomersAsked: (stream, asked) => progress.customers(stream, asked),
          onWorkDone: () => progress.stop(),
        }).finally(() => progress.stop()),
      ),
    );
  }).catch((error: unknown) => {
    // a run the source stopped answering still says what it did, and what it left for the next run
    if (error instanceof SourceGoneError && error.result)
      process.stdout.write(summary(error.result, error.notAttempted));
    throw error;
  });
  await pruneArchive(archive, logger);
  process.stdout.write(`${summary(session.value)}${options.json ? '' : describeSession(session)}`);
  failOnFailedWindows(session.value);
  failIfUnpublished(session.published);
}

/** `loyalty-etl run` and its flags. */
export function registerRun(program: Command): void {
  withJobFlags(
    program
      .command('run')
      .description(
        'incremental load: every stream of the job from its watermark (less the look-back) to the last closed day',
      ),
  )
    .option('--until <day>', 'last day to load instead of the last closed day')
    .option('--report <file>', 'rewrite the status page (HTML) at this path after the run, whether it succeeded or not')
    .option('--metrics-file <file>', METRICS_FILE_HELP)
    .option('--json', 'the summary on stdout as one JSON object')
    .action(runCommand);
}
