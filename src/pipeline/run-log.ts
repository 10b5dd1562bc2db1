import type { Logger } from '../log/logger.js';
import type { StreamName } from '../plan/job-plan.js';
import type { JobRunResult, RunUnderWay } from './job-run-request.js';

/**
 * The run's last line, which a scheduler's log alerting reads by its level: `run finished` (info), `run failed: …`
 * (error, whenever a window failed) or `run interrupted` (warn).
 */
export function logRunEnd(log: Logger, status: string, error: string | null, result: JobRunResult): void {
  const fields = {
    status,
    windowsLoaded: result.loaded.length,
    windowsFailed: result.failed.length,
    ...(result.failed.length > 0 ? { windowsFailedByStream: failuresByStream(result) } : {}),
    requests: result.requests,
    retries: result.retries,
  };
  if (status === 'failed') log.error(fields, `run failed${error ? `: ${error}` : ''}`);
  else if (status === 'interrupted') log.warn(fields, 'run interrupted');
  else log.info(fields, 'run finished');
}

/** Failed windows of each stream, in the order the streams ran. */
export function failuresByStream(result: JobRunResult): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const f of result.failed) counts[f.stream] = (counts[f.stream] ?? 0) + 1;
  return counts;
}

/** One line per stream when its windows are done: what it loaded, found empty and failed. */
export function logStream(run: RunUnderWay, name: StreamName): void {
  const { result } = run;
  const loaded = result.loaded.filter((c) => c.stream === name);
  const failed = result.failed.filter((f) => f.stream === name).length;
  const fields = {
    stream: name,
    windowsLoaded: loaded.length,
    windowsEmpty: result.empty.get(name) ?? 0,
    windowsFailed: failed,
    extracted: loaded.reduce((n, c) => n + c.extracted, 0),
    loaded: loaded.reduce((n, c) => n + c.loaded, 0),
    rejected: loaded.reduce((n, c) => n + c.rejected, 0),
  };
  if (failed > 0) run.log.warn(fields, `${name}: ${failed} window(s) failed`);
  else run.log.info(fields, `${name} done`);
}

/** The customer directory's sweep, said once when it is done. */
export function logDirectory(run: RunUnderWay): void {
  const { loaded, empty } = run.result.directory;
  run.log.info(
    {
      stream: 'accounts',
      from: run.request.plan.historyStart,
      windowsLoaded: loaded.length,
      windowsEmpty: empty,
      accountVersions: loaded.reduce((n, c) => n + c.extracted, 0),
    },
    "customer directory swept: every customer the service had before the job's first day is known",
  );
}
