import type { StreamName } from '../config/config-schema.js';
import { isoDay } from '../config/config-schema.js';
import { CommandError, ExitCode } from '../cli/exit-codes.js';
import { runJob } from '../pipeline/run-job.js';
import { lastClosedDay } from '../plan/days.js';
import { planIncrementalWindows } from '../plan/plan-windows.js';
import type { Window } from '../plan/windows.js';
import { readWatermark } from '../state/ledger.js';
import { commandLogger, createApi, leaseSeconds, resolveJob, type CommonOptions } from './job-session.js';
import { describeSession, failIfUnpublished, usingLoadSession } from './load-session.js';
import { failOnFailedWindows, summarizeRun } from './report.js';

export interface RunOptions extends CommonOptions {
  /** Last day to load instead of the last closed day in the source's zone (re-running up to a given night). */
  until?: string;
}

/**
 * `loyalty-etl run`: every stream of the job from its watermark, less the look-back, to the last closed day in
 * the source's zone; a job without a watermark starts at its first day. One run per job at a time: a second
 * one while the first lives exits with code 3 (the run lock, `run:<job>` in `_etl_locks`).
 */
export async function runCommand(options: RunOptions): Promise<void> {
  const { config, job, jobConfig } = resolveJob(options);
  if (options.until !== undefined && !isoDay.safeParse(options.until).success) throw new CommandError(`--until: ${options.until} is not a day YYYY-MM-DD`, ExitCode.usage);
  const through = options.until ?? lastClosedDay(config.source.timezone);
  const lease = leaseSeconds();
  const logger = commandLogger();
  const api = createApi(config, logger);
  const session = await usingLoadSession(config, logger, async (destination) => {
    const windows = new Map<StreamName, Window[]>();
    await destination.withConnection(async (conn) => {
      for (const stream of jobConfig.streams) windows.set(stream, planIncrementalWindows(jobConfig, await readWatermark(conn, job, stream), through));
    });
    return runJob({ config, job, command: 'run', work: { kind: 'planned', windows }, exclusive: true, leaseSeconds: lease, concurrency: config.source.concurrency, api, destination, logger });
  });
  process.stdout.write(`${summarizeRun(session.value)}\n${describeSession(session)}`);
  failOnFailedWindows(session.value);
  failIfUnpublished(session.published);
}
