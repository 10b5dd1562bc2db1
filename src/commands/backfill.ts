import { STREAM_NAMES, isoDay, type StreamName } from '../config/config-schema.js';
import { CommandError, ExitCode } from '../cli/exit-codes.js';
import { runJob } from '../pipeline/run-job.js';
import { planRange } from '../plan/plan-windows.js';
import type { Window } from '../plan/windows.js';
import { commandLogger, createApi, resolveJob, usingDestination, type CommonOptions } from './job-session.js';
import { failOnFailedWindows, summarizeRun } from './report.js';

export interface BackfillOptions extends CommonOptions {
  from: string;
  to: string;
  stream?: string;
  concurrency?: string;
}

/**
 * `loyalty-etl backfill --from D --to D`: re-extracts a historical range in windows of the job's length, up to
 * N windows at once. Watermarks only ever move forward, where done windows join them without a gap.
 */
export async function backfillCommand(options: BackfillOptions): Promise<void> {
  const { config, job, jobConfig } = resolveJob(options);
  for (const [flag, value] of [['--from', options.from], ['--to', options.to]] as const) {
    if (!isoDay.safeParse(value).success) throw new CommandError(`${flag}: ${value} is not a day YYYY-MM-DD`, ExitCode.usage);
  }
  if (options.from > options.to) throw new CommandError(`--from ${options.from} is after --to ${options.to}`, ExitCode.usage);
  const concurrency = options.concurrency === undefined ? config.source.concurrency : Number(options.concurrency);
  if (!Number.isInteger(concurrency) || concurrency < 1 || concurrency > 64) throw new CommandError(`--concurrency: ${options.concurrency} is not a whole number from 1 to 64`, ExitCode.usage);
  let streams: StreamName[] = jobConfig.streams;
  if (options.stream !== undefined) {
    if (!(STREAM_NAMES as readonly string[]).includes(options.stream)) throw new CommandError(`--stream: unknown stream '${options.stream}' (streams: ${STREAM_NAMES.join(', ')})`, ExitCode.usage);
    streams = [options.stream as StreamName];
  }
  const windows = new Map<StreamName, Window[]>(streams.map((s) => [s, planRange(jobConfig, options.from, options.to)]));
  const logger = commandLogger();
  const api = createApi(config, logger);
  const command = `backfill --from ${options.from} --to ${options.to}${options.stream ? ` --stream ${options.stream}` : ''}`;
  const result = await usingDestination(config, (destination) => runJob({ config, job, command, windows, concurrency, api, destination, logger }));
  process.stdout.write(`${summarizeRun(result)}\n`);
  failOnFailedWindows(result);
}
