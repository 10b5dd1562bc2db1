import { isoDay } from '../config/config-schema.js';
import { type JobSettings } from '../plan/job-plan.js';
import type { ResolvedConfig } from '../config/load-config.js';
import { warehouseOf } from '../load/warehouses.js';
import { CommandError, ExitCode } from './exit-codes.js';
import { lastClosedDay } from '../plan/days.js';
import { isLoopback, serveReport } from '../report/serve-report.js';
import { reportPathProblem, writeReport, type ReportTarget } from '../report/write-report.js';
import { metricsText } from '../report/metrics-file.js';
import { commandLogger, resolveJob, usingDestination, type CommonOptions } from './job-session.js';
import type { Command } from 'commander';
import { withJobFlags } from './shared-flags.js';
import { collectList } from './webhook.js';

export interface ReportOptions extends CommonOptions {
  /** The HTML file to write. */
  output: string;
  /** Last day of the calendars instead of the last closed day. */
  until?: string;
  /** Serve the page and rewrite it every `every` seconds, until interrupted. */
  serve?: boolean;
  port: string;
  host: string;
  every: string;
  /** `--allowed-host` (repeatable): further host names the served page answers to. */
  allowedHost?: string[];
  /** `--reject-payloads`: put the rejected records (customer data) on the page. */
  rejectPayloads?: boolean;
}

/**
 * `loyalty-etl report`: writes the status page, one self-contained HTML file read from the warehouse alone.
 * With `--serve`, serves it on `http://host:port/` and rewrites it every `--every` seconds (the page reloads
 * itself as often) until interrupted.
 */
export async function reportCommand(options: ReportOptions): Promise<void> {
  const { config, job, jobConfig } = resolveJob(options);
  if (options.until !== undefined && !isoDay.safeParse(options.until).success)
    throw new CommandError(`--until: ${options.until} is not a day YYYY-MM-DD`, ExitCode.usage);
  const every = Number(options.every);
  if (!Number.isInteger(every) || every < 1 || every > 86_400)
    throw new CommandError(
      `--every: ${options.every} is not a whole number of seconds from 1 to 86400`,
      ExitCode.usage,
    );
  const port = Number(options.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    throw new CommandError(`--port: ${options.port} is not a whole number from 0 to 65535`, ExitCode.usage);
  // opening a DuckDB path creates a warehouse there: a page of an empty new file would only hide the wrong path
  const missing = warehouseOf(config.destination).missingFile();
  if (missing !== undefined)
    throw new CommandError(
      `warehouse ${missing} does not exist (run or backfill first, or check destination.path / LOYALTY_WAREHOUSE)`,
      ExitCode.usage,
    );
  const target = reportTarget({ flag: '--output', path: options.output, config, job, jobConfig, until: options.until });
  if (options.serve) target.refreshSeconds = every;
  if (options.rejectPayloads) target.rejectPayloads = true;
  const write = () => usingDestination(config, (d) => writeReport(d, target));
  const written = await write();
  process.stdout.write(
    `report written to ${written.path}: ${written.windows} windows, ${Math.ceil(written.bytes / 1024)} KB\n`,
  );
  if (!options.serve) return;

  const logger = commandLogger();
  if (!isLoopback(options.host)) {
    const warning = `--host ${options.host} serves the status page beyond this machine: it has no login, so anyone who reaches the port reads it (put a proxy with authentication in front)`;
    logger.warn({ host: options.host }, warning);
    // a person at a terminal sees it whatever the log level; off a terminal every stderr line is a log line
    if (process.stderr.isTTY) process.stderr.write(`warning: ${warning}\n`);
  }
  const server = await serveReport({
    file: target.path,
    host: options.host,
    port,
    everySeconds: every,
    logger,
    refresh: async () => void (await write()),
    allowedHosts: options.allowedHost ?? [],
    metrics: (openMetrics) =>
      usingDestination(config, (d) =>
        metricsText(d, { job, jobConfig, timezone: config.source.timezone }, undefined, openMetrics),
      ),
  });
  logger.info({ url: server.url, file: target.path, everySeconds: every }, 'report served');
  process.stdout.write(`serving ${server.url} (rewritten from the warehouse every ${every} s; Ctrl-C stops)\n`);
  await new Promise<void>((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
  await server.close();
}

/**
 * The page a command writes to `path`, its last day the last closed day at each write (or `until`). A path whose
 * folder does not exist is a usage error of `flag`, found before anything is read or loaded.
 */
export function reportTarget(request: {
  flag: string;
  path: string;
  config: ResolvedConfig;
  job: string;
  jobConfig: JobSettings;
  until?: string;
}): ReportTarget {
  const problem = reportPathProblem(request.path);
  if (problem) throw new CommandError(`${request.flag}: ${problem}`, ExitCode.usage);
  const timezone = request.config.source.timezone;
  const until = request.until;
  return {
    path: request.path,
    job: request.job,
    jobConfig: request.jobConfig,
    timezone,
    through: until ?? (() => lastClosedDay(timezone)),
  };
}

/** `loyalty-etl report` and its flags. */
export function registerReport(program: Command): void {
  withJobFlags(
    program
      .command('report')
      .description('write the status page: one self-contained HTML file read from the warehouse'),
  )
    .option('-o, --output <file>', 'the HTML file to write', 'report.html')
    .option('--until <day>', 'last day of the calendars instead of the last closed day')
    .option(
      '--serve',
      "serve the page (and the job's Prometheus metrics at /metrics), rewriting it every --every seconds, until interrupted",
    )
    .option('--port <n>', 'port to serve on (0 picks a free one)', '8789')
    .option('--host <host>', 'address to serve on', '127.0.0.1')
    .option('--every <s>', 'seconds between rewrites when serving', '60')
    .option(
      '--allowed-host <name>',
      'a host name the served page answers to besides localhost and this machine’s own (repeatable)',
      collectList,
    )
    .option('--reject-payloads', 'show the rejected records on the page (they hold customer data; off by default)')
    .action(reportCommand);
}
