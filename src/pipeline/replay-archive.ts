import type { Destination } from '../load/destination.js';
import type { Logger } from '../log/logger.js';
import type { JobPlan, StreamName } from '../plan/job-plan.js';
import { LoyaltyApi, type SourceClient } from '../source/loyalty-api.js';
import { FatalSourceError } from '../source/source-errors.js';
import type { WindowCounts } from '../state/ledger.js';
import type { ArchiveReplay, WindowFailure } from './job-run-request.js';
import { conventionsOf } from './replay-spans.js';
import { runJob } from './run-job.js';

export interface ReplayRequest extends ArchiveReplay {
  plan: JobPlan;
  destination: Destination;
  logger: Logger;
  /** As recorded in `_etl_runs`. */
  command: string;
}

export interface ReplayResult {
  runId: string;
  loaded: Array<WindowCounts & { stream: StreamName }>;
  failed: WindowFailure[];
  /** Spans read from the archive and loaded again. */
  spans: number;
  /** Kept webhook events that could not be replayed, one line each. */
  eventsFailed: string[];
}

/** The run's own client in a replay: each span asks the answers its archive kept, so a request here fails, loudly. */
const noService: SourceClient = {
  requestCount: 0,
  setRequestsPerSecond: () => undefined,
  get: (path, _query, label = path) =>
    Promise.reject(new FatalSourceError(`${label}: a replay sends no request to the service`, label)),
};

/**
 * Rebuilds the tables of a range from the raw archive, with no request to the service: a run (`runJob`) whose
 * work is the archive's spans of the range (`replay-spans.ts`), recorded in `_etl_runs` with the job's run lock
 * and a lease kept alive while it lasts, like any other run.
 */
export async function replayArchive(request: ReplayRequest): Promise<ReplayResult> {
  const { plan, destination, logger, command, ...replay } = request;
  const result = await runJob({
    plan,
    command,
    work: { kind: 'replay', replay },
    concurrency: 1,
    api: new LoyaltyApi(noService, conventionsOf(plan)),
    destination,
    logger,
    exclusive: true,
  });
  const { runId, loaded, failed } = result;
  return {
    runId,
    loaded,
    failed,
    spans: result.replayed?.spans ?? 0,
    eventsFailed: result.replayed?.eventsFailed ?? [],
  };
}
