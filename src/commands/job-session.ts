import { loadConfig, resolveJobPlan, type ResolvedConfig } from '../config/load-config.js';
import type { JobPlan, JobSettings } from '../plan/job-plan.js';
import { CommandError, ExitCode } from './exit-codes.js';
import type { Destination } from '../load/destination.js';
import { openDestination } from '../load/warehouses.js';
import { createLogger, type LogFormat, type Logger } from '../log/logger.js';
import { currentLogStyle, useLogFormat } from '../log/log-style.js';
import { redact, registerSecret } from '../log/redact.js';
import { archiveOf } from '../config/duckdb-files.js';
import { AnswerArchive } from '../source/archive/answer-archive.js';
import { HttpClient } from '../source/http-client.js';
import { LoyaltyApi } from '../source/loyalty-api.js';

/** Options every command shares. */
export interface CommonOptions {
  config?: string;
  job?: string;
}

/** Loads the config, registers its secrets with the log redactor and names the job to work on. */
export function resolveJob(options: CommonOptions): {
  config: ResolvedConfig;
  job: string;
  jobConfig: JobSettings;
  plan: JobPlan;
} {
  const config = loadConfig(options.config ?? 'jobs.yaml');
  for (const secret of config.secrets) registerSecret(secret);
  const names = Object.keys(config.jobs);
  const job = options.job ?? names[0]!;
  const jobConfig = config.jobs[job];
  if (!jobConfig)
    throw new CommandError(`${config.file}: jobs: no job named '${job}' (jobs: ${names.join(', ')})`, ExitCode.usage);
  return { config, job, jobConfig, plan: resolveJobPlan(config, job) };
}

/** The source client configured for `config`. */
export function createApi(config: ResolvedConfig, logger: Logger): LoyaltyApi<HttpClient> {
  const { source } = config;
  const http = new HttpClient({
    baseUrl: source.base_url,
    auth: source.auth.token
      ? { header: source.auth.header, value: `${source.auth.prefix}${source.auth.token}` }
      : undefined,
    timeoutMs: source.timeout_ms,
    maxResponseBytes: source.max_response_bytes,
    retries: source.retries,
    requestsPerSecond: source.requests_per_second,
    concurrency: source.concurrency,
    backoffBaseMs: source.backoff_base_ms,
    backoffMaxMs: source.backoff_max_ms,
    logger,
  });
  return new LoyaltyApi(http, { exportEnd: source.export_end, firstPage: source.first_page });
}

/** The raw archive `config` keeps the service's answers in (`destination.archive`), or undefined when it keeps none. */
export function createArchive(config: ResolvedConfig): AnswerArchive | undefined {
  const where = archiveOf(config.destination, config.file);
  return where && new AnswerArchive(where.root, { keepDays: where.keepDays, maxBytes: where.maxBytes });
}

/** Applies the archive's retention after a load; a failure to delete is logged, never fails the load. */
export async function pruneArchive(archive: AnswerArchive | undefined, logger: Logger): Promise<void> {
  if (!archive) return;
  try {
    const deleted = await archive.prune();
    if (deleted > 0) logger.info({ archive: archive.root, deleted }, 'raw archive: spans past its retention deleted');
  } catch (error) {
    logger.warn({ archive: archive.root, err: error }, 'raw archive: could not apply its retention');
  }
}

/**
 * Opens the warehouse for the length of `fn`, and closes it whatever happens. With `create: false` (`check`,
 * `status`, `verify`) a warehouse that does not exist is an error rather than a new empty one.
 */
export async function usingDestination<T>(
  config: ResolvedConfig,
  fn: (destination: Destination) => Promise<T>,
  options: { create?: boolean } = {},
): Promise<T> {
  const destination = await openDestination(config.destination, options);
  try {
    return await fn(destination);
  } finally {
    await destination.close();
  }
}

export { useLogFormat };

/** The format the command line chose; a command draws a progress display only where its logs are human lines. */
export function logFormat(): LogFormat {
  return currentLogStyle().format;
}

/**
 * Node's own warnings (a deprecation, too many listeners) as log lines in the chosen format, instead of the plain
 * text Node writes to stderr, which would break a stream of JSON lines.
 */
export function logProcessWarnings(): void {
  process.removeAllListeners('warning');
  process.on('warning', (warning) => commandLogger().warn({ err: warning }, `node: ${warning.message}`));
}

/** An error nothing expected (a bug), with its stack, as a log line in the chosen format. */
export function logUnexpected(error: Error): void {
  const logger = commandLogger();
  if (currentLogStyle().format === 'json') logger.fatal({ err: error }, `unexpected error: ${error.message}`);
  else process.stderr.write(`${redact(error.stack ?? error.message)}\n`);
}

/** The logger of a command, on stderr, in the format the command line chose. */
export function commandLogger(options: { level?: string } = {}): Logger {
  return createLogger({ ...options, ...currentLogStyle() });
}
