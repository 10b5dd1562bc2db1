import type { JobSettings, StreamName } from '../plan/job-plan.js';
import type { Destination } from '../load/destination.js';
import type { Day } from '../plan/days.js';
import { planIncrementalWindows } from '../plan/plan-windows.js';
import type { Window } from '../plan/windows.js';
import { readWatermark } from '../state/ledger.js';

/**
 * The windows an incremental run (`run`, the demo) loads: for every stream of the job, from its watermark less the
 * look-back — or the job's first day, before its first window — through `through`.
 */
export async function incrementalWindows(
  destination: Destination,
  job: string,
  jobConfig: JobSettings,
  through: Day,
): Promise<Map<StreamName, Window[]>> {
  return destination.withConnection(async (conn) => {
    const windows = new Map<StreamName, Window[]>();
    for (const stream of jobConfig.streams)
      windows.set(stream, planIncrementalWindows(jobConfig, await readWatermark(conn, job, stream), through));
    return windows;
  });
}
