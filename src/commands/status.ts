import { lastClosedDay } from '../plan/days.js';
import { readJobStatus, type JobStatus } from '../state/status-report.js';
import { resolveJob, usingDestination, type CommonOptions } from './job-session.js';
import { table } from './table.js';

export interface StatusOptions extends CommonOptions {
  json?: boolean;
}

/** `loyalty-etl status`: per stream the watermark, lag, windows and rejects; then the last runs. */
export async function statusCommand(options: StatusOptions): Promise<void> {
  const { config, job, jobConfig } = resolveJob(options);
  const status = await usingDestination(config, (destination) =>
    destination.withConnection((conn) => readJobStatus(conn, job, jobConfig, lastClosedDay(config.source.timezone))),
  );
  process.stdout.write(options.json ? `${JSON.stringify(status, null, 2)}\n` : formatStatus(status));
}

/** The human form of `status`. */
export function formatStatus(status: JobStatus): string {
  const lines = [`job ${status.job} (last closed day ${status.lastClosedDay})`, ''];
  lines.push(table(
    ['stream', 'complete through', 'lag (days)', 'windows done', 'failed', 'rows loaded', 'rejects', 'requests'],
    status.streams.map((s) => [s.stream, s.completeThrough ?? '-', s.lagDays ?? '-', s.windowsDone, s.windowsFailed, s.rowsLoaded, s.rejects, s.requests]),
  ));
  lines.push('', 'last runs');
  lines.push(table(
    ['started', 'command', 'status', 'seconds', 'windows', 'rows', 'rejected', 'requests', 'error'],
    status.runs.map((r) => [r.startedAt.slice(0, 19), r.command, r.status, r.durationSeconds ?? '-', r.windows, r.rowsLoaded, r.rowsRejected, r.requests ?? '-', (r.error ?? '').slice(0, 80)]),
  ));
  return `${lines.join('\n')}\n`;
}
