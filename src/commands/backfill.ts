import { randomUUID } from 'node:crypto';
import type { JobPlan, StreamName } from '../plan/job-plan.js';
import type { Destination } from '../load/destination.js';
import type { Logger } from '../log/logger.js';
import type { JobRunResult } from '../pipeline/job-run-request.js';
import type { CustomersAsked } from '../pipeline/customer-tally.js';
import type { AnswerArchive } from '../source/archive/answer-archive.js';
import type { LoyaltyApi } from '../source/loyalty-api.js';
import type { WindowCounts } from '../state/ledger.js';
import { CommandError, ExitCode } from './exit-codes.js';
import { runJob } from '../pipeline/run-job.js';
import { planRange } from '../plan/plan-windows.js';
import { finishBackfill, openBackfill } from '../state/backfills.js';
import { backfillWindowCounts, type BackfillWindowCounts } from '../state/window-claims.js';
import { createProgress, showsProgressBar } from './progress-display.js';
import {
  type CommonOptions,
  commandLogger,
  createApi,
  createArchive,
  pruneArchive,
  resolveJob,
} from './job-session.js';
import { describeSession, failIfUnpublished, usingLoadSession } from './load-session.js';
import { interruptibleRun } from './interruption.js';
import { failOnFailedWindows, runJson, summarizeRun } from './run-summary.js';
import type { Command } from 'commander';
import { withJobFlags, withRangeFlags, parseRange, type RangeOptions } from './shared-flags.js';
import { metricsAfter } from '../report/metrics-file.js';
import { SourceGoneError } from '../pipeline/pipeline-errors.js';
import { METRICS_FILE_HELP, metricsTarget, runOfThisProcess, type MetricsOptions } from './metrics-flag.js';

export interface BackfillOptions extends CommonOptions, RangeOptions, MetricsOptions {
  /** The summary on stdout as one JSON object. */
  json?: boolean;
  concurrency?: string;
  /** Start the range afresh instead of resuming (or joining) the open backfill of the same range. */
  restart?: boolean;
}

/** How often the progress display re-reads what other workers of the backfill have finished. */
const SYNC_EVERY_MS = 2000;

/**
 * `loyalty-etl backfill --from D --to D`: re-extracts a historical range in windows of the job's length, up to
 * N spans at once, each window claimed in `_etl_windows` before it is extracted and recorded there when it
 * commits. The same command again — after a kill, or on other machines at the same time — joins the open
 * backfill of that range and does only the windows not yet done for it; `--restart` starts afresh.
 * Watermarks only ever move forward, where done windows join them without a gap.
 */
export async function backfillCommand(options: BackfillOptions): Promise<void> {
  const { config, plan, job, jobConfig } = resolveJob(options);
  const metrics = metricsTarget(options, config, job, jobConfig);
  const { streams } = parseRange(options, plan.job);
  const concurrency = options.concurrency === undefined ? plan.sourceConcurrency : Number(options.concurrency);
  if (!Number.isInteger(concurrency) || concurrency < 1 || concurrency > 64)
    throw new CommandError(`--concurrency: ${options.concurrency} is not a whole number from 1 to 64`, ExitCode.usage);
  // On a terminal the bar is the display; log lines below warnings would only scroll it away.
  const onTerminal = showsProgressBar();
  const logger = commandLogger(onTerminal && !process.env.LOYALTY_LOG_LEVEL ? { level: 'warn' } : {});
  const archive = createArchive(config);
  const request: BackfillRequest = {
    options,
    plan,
    streams,
    concurrency,
    logger,
    api: createApi(config, logger),
    archive,
  };
  const started = performance.now();
  const seconds = () => (performance.now() - started) / 1000;
  const session = await usingLoadSession(config, logger, (destination) =>
    metricsAfter(
      metrics,
      destination,
      logger,
      (value, error) =>
        runOfThisProcess(value?.result ?? (error instanceof SourceGoneError ? error.result : undefined)),
      () => runBackfill(destination, request),
    ),
  ).catch((error: unknown) => {
    // a backfill the source stopped answering still says what it did; the same command resumes the rest
    if (error instanceof SourceGoneError && error.result)
      process.stdout.write(
        options.json ? runJson(error.result, seconds()) : `${summarizeRun(error.result, seconds())}\n`,
      );
    throw error;
  });
  const { result, summary } = session.value;
  await pruneArchive(archive, logger);
  process.stdout.write(
    options.json
      ? runJson(result, seconds())
      : `${summarizeRun(result, seconds())}\n${summary.text}\n${describeSession(session)}`,
  );
  failOnFailedWindows(result);
  if (summary.failed > 0) {
    throw new CommandError(
      `${summary.failed} window(s) of backfill ${summary.backfillId} failed in other workers; the same command again retries them`,
      ExitCode.windowsFailed,
    );
  }
  failIfUnpublished(session.published);
}

/** What a backfill works with, once its flags are checked. */
interface BackfillRequest {
  options: BackfillOptions;
  plan: JobPlan;
  streams: StreamName[];
  concurrency: number;
  logger: Logger;
  api: LoyaltyApi;
  archive: AnswerArchive | undefined;
}

/** Opens (or joins) the backfill of the range, loads what is left of it with a progress display, and sums it up. */
async function runBackfill(
  destination: Destination,
  request: BackfillRequest,
): Promise<{ result: JobRunResult; summary: { text: string; failed: number; backfillId: string } }> {
  const { options, plan, streams, logger } = request;
  const { name: job, job: jobConfig } = plan;
  const runId = randomUUID();
  // the grid runs before `first_day` too: a range of any days is loaded as asked
  const windows = planRange(jobConfig, options.from, options.to);
  const grid = `${jobConfig.window_days}d@${jobConfig.first_day}`;
  const backfill = await destination.ledgerTransaction((conn) =>
    openBackfill(conn, { job, streams, windows, grid, restart: options.restart === true, runId }),
  );
  const scope = { job, backfillId: backfill.backfillId, from: backfill.from, to: backfill.to, streams };
  const counts = () => destination.withConnection((conn) => backfillWindowCounts(conn, scope));
  const before = await counts();
  logger.info(
    {
      job,
      backfillId: backfill.backfillId,
      streams,
      from: options.from,
      to: options.to,
      windowsTotal: before.total,
      windowsDone: before.done,
      windowsHeld: before.held,
    },
    backfill.created ? 'backfill started' : 'backfill joined: only windows not yet done for it are loaded',
  );
  const progress = followProgress(before, destination.capabilities.multiProcess ? counts : undefined, logger);
  const command = `backfill --from ${options.from} --to ${options.to}${options.stream ? ` --stream ${options.stream}` : ''}${options.restart ? ' --restart' : ''}`;
  const result = await runJob({
    plan,
    command,
    runId,
    work: { kind: 'backfill', backfill },
    concurrency: request.concurrency,
    api: request.api,
    destination,
    archive: request.archive,
    logger,
    stop: interruptibleRun(),
    // every worker of a shared backfill refreshes the reference data before its spans: custom fields are read by
    // their definitions (profile_fields), and a worker joining one must not load accounts before they are there
    refreshReferenceData: true,
    onSpanDone: (_stream, spanCounts) => progress.spanDone(spanCounts),
    onCustomersAsked: (stream, asked) => progress.customers(stream, asked),
    onWorkDone: () => progress.stop(),
  }).finally(() => progress.stop());
  const after = await counts();
  if (after.failed === 0 && after.open === 0)
    await destination.ledgerTransaction((conn) => finishBackfill(conn, backfill.backfillId));
  const text =
    `backfill ${backfill.backfillId} (${backfill.created ? 'started' : 'joined'}): ${after.done} of ${after.total} windows done` +
    `${after.failed ? `, ${after.failed} failed` : ''}; ${result.loaded.length} loaded by this worker${before.done ? `, ${before.done} were done before it started` : ''}`;
  return { result, summary: { text, failed: after.failed, backfillId: backfill.backfillId } };
}

/**
 * The progress display of a backfill: windows done and records read by this worker, and — where other workers
 * may share the backfill (`recount`) — what they finished too, re-read every few seconds.
 */
function followProgress(
  before: BackfillWindowCounts,
  recount: (() => Promise<BackfillWindowCounts>) | undefined,
  logger: Logger,
) {
  const progress = createProgress({
    label: 'backfill',
    total: before.total,
    done: before.done,
    stream: process.stderr,
    bar: showsProgressBar(),
    logger,
  });
  let done = before.done;
  let records = 0;
  let syncedAt = Date.now();
  let syncing = false;
  const sync = () => {
    if (!recount || syncing || Date.now() - syncedAt <= SYNC_EVERY_MS) return;
    syncing = true;
    void recount()
      .then((c) => {
        done = Math.max(done, c.done);
        progress.update(done, records);
      })
      .catch(() => undefined)
      .finally(() => {
        syncing = false;
        syncedAt = Date.now();
      });
  };
  return {
    spanDone(counts: WindowCounts[]) {
      done += counts.length;
      records += counts.reduce((n, c) => n + c.extracted, 0);
      progress.update(done, records);
      sync();
    },
    customers: (stream: StreamName, asked: CustomersAsked | undefined) => progress.customers(stream, asked),
    stop: () => progress.stop(),
  };
}

/** `loyalty-etl backfill` and its flags. */
export function registerBackfill(program: Command): void {
  withRangeFlags(withJobFlags(program.command('backfill').description('re-extract a historical range in windows')))
    .option('--concurrency <n>', 'spans at once (default: source.concurrency)')
    .option('--restart', 'start the range afresh instead of resuming or joining the open backfill of the same range')
    .option('--metrics-file <file>', METRICS_FILE_HELP)
    .option('--json', 'the summary on stdout as one JSON object')
    .action(backfillCommand);
}
