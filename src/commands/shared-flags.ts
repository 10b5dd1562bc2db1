import type { Command } from 'commander';
import { CommandError, ExitCode } from './exit-codes.js';
import { isoDay } from '../config/config-schema.js';
import { STREAM_NAMES, type JobSettings, type StreamName } from '../plan/job-plan.js';
import type { Day } from '../plan/days.js';
import { STREAM_ORDER } from '../streams/registry.js';

/** Flags every job command takes: the jobs file and the job. */
export function withJobFlags(cmd: Command): Command {
  return cmd
    .option('-c, --config <file>', 'the jobs file', 'jobs.yaml')
    .option('-j, --job <name>', 'the job to work on (default: the first in the file)');
}

/** `--from`, `--to` and `--stream`, as `backfill` and `verify` take them. */
export function withRangeFlags(cmd: Command): Command {
  return cmd
    .requiredOption('--from <day>', 'first day (YYYY-MM-DD)')
    .requiredOption('--to <day>', 'last day (YYYY-MM-DD)')
    .option('--stream <name>', 'only this stream');
}

/** What {@link withRangeFlags} parses. */
export interface RangeOptions {
  from: string;
  to: string;
  stream?: string;
}

/**
 * The range and streams the flags ask for: two real days in order, and `--stream` one of the job's streams
 * (all of them, in the order a job loads them, without it).
 *
 * @throws CommandError (exit 2) naming the flag and what is wrong
 */
export function parseRange(options: RangeOptions, job: JobSettings): { from: Day; to: Day; streams: StreamName[] } {
  for (const [flag, value] of [
    ['--from', options.from],
    ['--to', options.to],
  ] as const) {
    if (!isoDay.safeParse(value).success)
      throw new CommandError(`${flag}: ${value} is not a day YYYY-MM-DD`, ExitCode.usage);
  }
  if (options.from > options.to)
    throw new CommandError(`--from ${options.from} is after --to ${options.to}`, ExitCode.usage);
  if (options.stream === undefined)
    return { from: options.from, to: options.to, streams: STREAM_ORDER.filter((s) => job.streams.includes(s)) };
  if (!(STREAM_NAMES as readonly string[]).includes(options.stream))
    throw new CommandError(
      `--stream: unknown stream '${options.stream}' (streams: ${STREAM_NAMES.join(', ')})`,
      ExitCode.usage,
    );
  return { from: options.from, to: options.to, streams: [options.stream as StreamName] };
}
