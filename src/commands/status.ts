import { addDays, lastClosedDay } from '../plan/days.js';
import { windowStartOf } from '../plan/plan-windows.js';
import type { JobSettings } from '../plan/job-plan.js';
import { readDirectoryStatus } from '../state/directory.js';
import { coverageLine, stateCoverage } from '../state/state-coverage.js';
import { readHistoryStatus } from '../state/history-status.js';
import { streamDefinition } from '../streams/registry.js';
import { readJobStatus, type JobStatus } from '../state/status-report.js';
import { STATE_STREAMS } from './verify-state.js';
import { resolveJob, usingDestination, type CommonOptions } from './job-session.js';
import { table } from './table.js';
import type { Command } from 'commander';
import { withJobFlags } from './shared-flags.js';

export interface StatusOptions extends CommonOptions {
  json?: boolean;
}

/** `loyalty-etl status`: per stream the watermark, lag, windows and rejects; the run lock, backfills, the last runs. */
export async function statusCommand(options: StatusOptions): Promise<void> {
  const { config, job, jobConfig } = resolveJob(options);
  const status = await usingDestination(
    config,
    (destination) =>
      destination.withConnection(async (conn): Promise<JobStatus> => {
        const status = {
          ...(await readJobStatus(conn, job, jobConfig, lastClosedDay(config.source.timezone))),
          history: await readHistoryStatus(conn, historiesOf(jobConfig)),
        };
        if (!jobConfig.streams.includes('accounts')) return status;
        const customerState = [];
        for (const stream of STATE_STREAMS.filter((s) => jobConfig.streams.includes(s)))
          customerState.push(await stateCoverage(conn, stream, jobConfig.sweep_days, new Date()));
        return { ...status, directory: await readDirectoryStatus(conn, job, windowStartOf(jobConfig, config.source.history_start)), customerState };
      }),
    { create: false },
  );
  process.stdout.write(options.json ? `${JSON.stringify(status, null, 2)}\n` : formatStatus(status));
}

/** The history tables the job's streams declare, and whether the job keeps them. */
function historiesOf(jobConfig: JobSettings): Array<{ stream: string; table: string; observations: string; kept: boolean }> {
  const off: Partial<Record<string, boolean>> = jobConfig.history ?? {};
  return jobConfig.streams.flatMap((stream) =>
    streamDefinition(stream).tables.flatMap((t) =>
      t.history ? [{ stream, table: t.history.table, observations: t.history.observations, kept: off[stream] !== false }] : [],
    ),
  );
}

/** The human form of `status`. */
export function formatStatus(status: JobStatus): string {
  const lines = [`job ${status.job} (last closed day ${status.lastClosedDay})`, ''];
  lines.push(
    table(
      ['stream', 'complete through', 'lag (days)', 'windows done', 'failed', 'pending', 'rows loaded', 'rejects', 'requests'],
      status.streams.map((s) => [
        s.stream,
        s.completeThrough ?? '-',
        s.lagDays ?? '-',
        s.windowsDone,
        s.windowsFailed,
        s.windowsPending,
        s.rowsLoaded,
        s.rejects,
        s.requests,
      ]),
    ),
  );
  const directory = status.directory;
  if (directory) {
    const loaded = directory.completeThrough >= directory.from;
    lines.push(
      '',
      `customer directory: ${directory.customers} customers in accounts; ${loaded ? `every accounts window from ${directory.from} through ${directory.completeThrough} is done` : `not loaded yet (from ${directory.from}): the next run sweeps it`}`,
    );
    if (loaded && addDays(directory.completeThrough, 1) < status.lastClosedDay)
      lines.push(`  (accounts windows from ${addDays(directory.completeThrough, 1)} on are not all done: postings after that day wait for them)`);
  }
  if (status.customerState?.length) lines.push('', ...status.customerState.map(coverageLine));
  if (status.history && status.history.length > 0) {
    lines.push('', 'history (versions grow with changes, not with nights)');
    lines.push(
      table(
        ['table', 'versions', 'current', 'observations', 'kept'],
        status.history.map((h) => [h.table, h.versions, h.current, h.observations, h.kept ? 'yes' : 'no (jobs.<name>.history)']),
      ),
    );
  }
  const lock = status.runLock;
  lines.push(
    '',
    lock
      ? `run lock: held by run ${lock.runId}${lock.pid !== null ? ` (pid ${lock.pid}${lock.host ? ` on ${lock.host}` : ''})` : ''} since ${(lock.since ?? '').slice(0, 19)}`
      : 'run lock: free',
  );
  const events = status.webhookEvents;
  if (events) {
    lines.push(
      `webhook events: ${events.stored} stored${events.lastReceivedAt ? `, last received ${events.lastReceivedAt.slice(0, 19)}` : ''}; ${events.backlog} not yet asked about by loyalty_postings (bookmark at event ${events.bookmark})`,
    );
  }
  if (status.backfills.length > 0) {
    lines.push('', 'backfills');
    lines.push(
      table(
        ['backfill', 'range', 'streams', 'status', 'windows done', 'failed', 'workers', 'started'],
        status.backfills.map((b) => [
          b.backfillId,
          `${b.from}..${b.to}`,
          b.streams.join(','),
          b.status,
          `${b.windowsDone}/${b.windowsTotal}`,
          b.windowsFailed,
          b.liveWorkers,
          b.startedAt.slice(0, 19),
        ]),
      ),
    );
  }
  lines.push('', 'last runs');
  lines.push(
    table(
      ['started', 'command', 'status', 'seconds', 'windows', 'rows', 'rejected', 'requests', 'error'],
      status.runs.map((r) => [
        r.startedAt.slice(0, 19),
        r.command,
        r.status,
        r.durationSeconds ?? '-',
        r.windows,
        r.rowsLoaded,
        r.rowsRejected,
        r.requests ?? '-',
        (r.error ?? '').slice(0, 80),
      ]),
    ),
  );
  return `${lines.join('\n')}\n`;
}

/** `loyalty-etl status` and its flags. */
export function registerStatus(program: Command): void {
  withJobFlags(program.command('status').description('per stream: watermark, lag, windows, rejects; the customer directory; the last runs'))
    .option('--json', 'machine-readable output')
    .action(statusCommand);
}
