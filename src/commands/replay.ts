import { DateTime } from 'luxon';
import type { Command } from 'commander';
import { CommandError, ExitCode } from './exit-codes.js';
import { replayArchive } from '../pipeline/replay-archive.js';
import type { Day } from '../plan/days.js';
import type { AnswerArchive } from '../source/archive/answer-archive.js';
import { archivedEvents, EVENTS_STREAM } from '../source/archive/event-archive.js';
import { profilesRejected, rejectedWindows } from '../state/replay-windows.js';
import { replayEvents, type EventReplay, type KeptEvent } from '../webhook/event-replay.js';
import type { LoyaltyEvent } from '../webhook/loyalty-event.js';
import { commandLogger, createArchive, resolveJob, type CommonOptions } from './job-session.js';
import { describeSession, failIfUnpublished, usingLoadSession } from './load-session.js';
import { parseRange, withJobFlags, withRangeFlags, type RangeOptions } from './shared-flags.js';
import { metricsAfter } from '../report/metrics-file.js';
import { METRICS_FILE_HELP, metricsTarget, type MetricsOptions } from './metrics-flag.js';

export interface ReplayOptions extends CommonOptions, RangeOptions, MetricsOptions {
  /** Only the windows of the range holding rejected records. */
  rejects?: boolean;
}

/**
 * `loyalty-etl replay --from D --to D [--stream S] [--rejects]`: rebuilds the tables of a range from the raw
 * archive alone, with no request to the service (after a parser fix, a type change, or a lost warehouse). With
 * `--rejects`, only the windows holding rejected records load again. The kept webhook events of the range are
 * written again into `loyalty_events` too (without `--stream`; `--stream loyalty_events`: those alone). Exit 1
 * when a window of the range could not be rebuilt from the archive (its answers never committed, or missing).
 */
export async function replayCommand(options: ReplayOptions): Promise<void> {
  const { config, plan, job, jobConfig } = resolveJob(options);
  const metrics = metricsTarget(options, config, job, jobConfig);
  // the webhook's events belong to no stream of the job: `--stream loyalty_events` replays them alone
  const eventsOnly = options.stream === EVENTS_STREAM;
  const range = parseRange(eventsOnly ? { ...options, stream: undefined } : options, plan.job);
  const { from, to } = range;
  const streams = eventsOnly ? [] : range.streams;
  if (eventsOnly && options.rejects)
    throw new CommandError(
      `replay: --rejects and --stream ${EVENTS_STREAM}: webhook events have no rejects (one the table refuses is in _etl_event_quarantine)`,
      ExitCode.usage,
    );
  const withEvents = eventsOnly || (options.stream === undefined && !options.rejects);
  let events: EventReplay | undefined;
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
  const windowsFailed = (failed: ReadonlyArray<{ stream: string }>) => {
    const counts: Record<string, number> = {};
    for (const f of failed) counts[f.stream] = (counts[f.stream] ?? 0) + 1;
    return counts;
  };
  const session = await usingLoadSession(config, logger, (destination) =>
    metricsAfter(
      metrics,
      destination,
      logger,
      (value) => value && { runId: value.runId, windowsFailed: windowsFailed(value.failed) },
      () =>
        replayArchive({
          plan,
          archive,
          destination,
          logger,
          from,
          to,
          streams,
          command,
          ...(withEvents
            ? {
                events: async (runId: string) => {
                  events = await replayEvents(destination, keptEvents(archive, from, to, plan.timezone), {
                    timezone: plan.timezone,
                    runId,
                  });
                  return events.unreadable.map(
                    (u) => `${EVENTS_STREAM} ${u.eventKey} received ${u.receivedAt}: ${u.problem}`,
                  );
                },
              }
            : {}),
          ...(options.rejects
            ? {
                windows: (stream) =>
                  destination.withConnection((conn) => rejectedWindows(conn, plan.name, stream, from, to)),
                profilesRejected: () => destination.withConnection((conn) => profilesRejected(conn, plan.name)),
              }
            : {}),
        }),
    ),
  );
  const result = session.value;
  const rows = result.loaded.reduce((n, c) => n + c.loaded, 0);
  const rejected = result.loaded.reduce((n, c) => n + c.rejected, 0);
  process.stdout.write(
    `replay ${from}..${to} from ${archive.root}: ${result.spans} archived span(s), ${result.loaded.length} window(s) loaded again ` +
      `(${rows} rows, ${rejected} rejected), no request to the service\n` +
      (events && (eventsOnly || events.events > 0)
        ? `${EVENTS_STREAM}: ${events.events} kept webhook event(s) received ${from}..${to}: ${events.inserted} inserted, ${events.rewritten} written again, ${events.quarantined} quarantined\n`
        : '') +
      result.failed.map((f) => `not replayed: ${f.stream} ${f.window.start}: ${f.error}\n`).join('') +
      result.eventsFailed.map((e) => `not replayed: ${e}\n`).join('') +
      describeSession(session),
  );
  // nothing in the archive for the range is no success: the tables of the range were not rebuilt
  if (eventsOnly && events?.events === 0)
    throw new CommandError(
      `replay: no webhook event received ${from}..${to} (${plan.timezone}) is kept in ${archive.root} (no receiver ran with the archive on, or past its retention)`,
      ExitCode.windowsFailed,
    );
  if (!eventsOnly && result.spans === 0 && !options.rejects)
    throw new CommandError(
      `replay: no archived span of job ${plan.name} holds a window of ${from}..${to}${options.stream ? ` for ${options.stream}` : ''} in ${archive.root} (never loaded with the archive on, or past its retention)`,
      ExitCode.windowsFailed,
    );
  if (result.failed.length > 0)
    throw new CommandError(
      `${result.failed.length} window(s) could not be rebuilt from the archive; first: ${result.failed[0]!.error}`,
      ExitCode.windowsFailed,
    );
  if (result.eventsFailed.length > 0)
    throw new CommandError(
      `${result.eventsFailed.length} kept webhook event(s) could not be replayed; first: ${result.eventsFailed[0]}`,
      ExitCode.windowsFailed,
    );
  failIfUnpublished(session.published);
}

/** The kept webhook events received from the start of `from` to the end of `to` in `zone`, a UTC day at a time. */
async function* keptEvents(archive: AnswerArchive, from: Day, to: Day, zone: string): AsyncIterable<KeptEvent[]> {
  const fromUtc = DateTime.fromISO(from, { zone }).startOf('day').toUTC().toISO()!;
  const toUtc = DateTime.fromISO(to, { zone }).plus({ days: 1 }).startOf('day').toUTC().toISO()!;
  for await (const day of archivedEvents(archive, fromUtc, toUtc))
    yield day.map((e) => ({ event: JSON.parse(e.body) as LoyaltyEvent, receivedAt: e.at, receiverId: e.receiverId }));
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
    .option('--metrics-file <file>', METRICS_FILE_HELP)
    .action(replayCommand);
}
