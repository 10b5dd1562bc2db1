import type { Command } from 'commander';
import { CommandError, ExitCode } from './exit-codes.js';
import { replayArchive } from '../pipeline/replay-archive.js';
import { rejectedWindows } from '../state/replay-windows.js';
import { commandLogger, createArchive, resolveJob, type CommonOptions } from './job-session.js';
import { describeSession, failIfUnpublished, usingLoadSession } from './load-session.js';
import { parseRange, withJobFlags, withRangeFlags, type RangeOptions } from './shared-flags.js';

export interface ReplayOptions extends CommonOptions, RangeOptions {
  /** Only the windows of the range holding rejected records. */
  rejects?: boolean;
}

/**
 * `loyalty-etl replay --from D --to D [--stream S] [--rejects]`: rebuilds the tables of a range from the raw
 * archive alone, with no request to the service (after a parser fix, a type change, or a lost warehouse). With
 * `--rejects`, only the windows holding rejected records load again. Exit 1 when a window of the range could
 * not be rebuilt from the archive (its answers never committed, or missing).
 */
export async function replayCommand(options: ReplayOptions): Promise<void> {
  const { config, plan } = resolveJob(options);
  const { from, to, streams } = parseRange(options, plan.job);
  const archive = createArchive(config);
  if (!archive)
    throw new CommandError(
      `replay: ${config.file}: destination.archive is false: there is no archive to replay`,
      ExitCode.usage,
    );
  if ((await archive.usage()).files === 0)
    throw new CommandError(
      `replay: no archived span in ${archive.root} (a run or backfill archives what it loads)`,
      ExitCode.usage,
    );
  const logger = commandLogger();
  const command = `replay --from ${from} --to ${to}${options.stream ? ` --stream ${options.stream}` : ''}${options.rejects ? ' --rejects' : ''}`;
  const session = await usingLoadSession(config, logger, (destination) =>
    replayArchive({
      plan,
      archive,
      destination,
      logger,
      from,
      to,
      streams,
      command,
      ...(options.rejects
        ? {
            windows: (stream) =>
              destination.withConnection((conn) => rejectedWindows(conn, plan.name, stream, from, to)),
          }
        : {}),
    }),
  );
  const result = session.value;
  const rows = result.loaded.reduce((n, c) => n + c.loaded, 0);
  const rejected = result.loaded.reduce((n, c) => n + c.rejected, 0);
  process.stdout.write(
    `replay ${from}..${to} from ${archive.root}: ${result.spans} archived span(s), ${result.loaded.length} window(s) loaded again ` +
      `(${rows} rows, ${rejected} rejected), no request to the service\n` +
      result.failed.map((f) => `not replayed: ${f.stream} ${f.window.start}: ${f.error}\n`).join('') +
      describeSession(session),
  );
  // nothing in the archive for the range is no success: the tables of the range were not rebuilt
  if (result.spans === 0 && !options.rejects)
    throw new CommandError(
      `replay: no archived span of job ${plan.name} holds a window of ${from}..${to}${options.stream ? ` for ${options.stream}` : ''} in ${archive.root} (never loaded with the archive on, or past its retention)`,
      ExitCode.windowsFailed,
    );
  if (result.failed.length > 0)
    throw new CommandError(
      `${result.failed.length} window(s) could not be rebuilt from the archive; first: ${result.failed[0]!.error}`,
      ExitCode.windowsFailed,
    );
  failIfUnpublished(session.published);
}

/** `loyalty-etl replay` and its flags. */
export function registerReplay(program: Command): void {
  withRangeFlags(
    withJobFlags(
      program
        .command('replay')
        .description('rebuild the tables of a range from the raw archive, with no request to the service'),
    ),
  )
    .option('--rejects', 'only the windows holding rejected records (after a fix)')
    .action(replayCommand);
}
