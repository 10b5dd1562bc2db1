import { hostname } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import type { StreamName } from '../plan/job-plan.js';
import { reapAbandonedRuns } from '../state/runs.js';
import type { StreamDefinition } from '../streams/stream.js';
import { loadClaimedSpan, type SpanTarget } from './claimed-span.js';
import type { RunUnderWay } from './job-run-request.js';
import type { WindowQueue } from './window-queue.js';

/** Longest pause between two claims while the windows left are held by other workers. */
const MAX_WAIT_MS = 2000;

/** Spans of `stream` this worker loads at once: one per lane. */
export function lanesOf(run: RunUnderWay, stream: StreamDefinition): number {
  return stream.lanes(Math.max(1, run.request.concurrency));
}

/**
 * Works through a stream's queue with the stream's lanes, each taking the next span off the queue and loading it
 * ({@link loadClaimedSpan}); throws the first warehouse error a lane hit, once all have ended.
 */
export async function runLanes(
  run: RunUnderWay,
  name: StreamName,
  stream: StreamDefinition,
  queue: WindowQueue,
  target: SpanTarget,
): Promise<void> {
  run.result.failed.push(...queue.skipped.map((s) => ({ stream: name, ...s })));
  target = { ...target, through: queue.lastDay };
  const waiting = { logged: false };
  // once a lane breaks, the others finish the span in hand and stop: none waits for windows it will never get
  let laneBroken = false;
  const lane = () =>
    runLane(run, name, stream, queue, target, waiting, () => laneBroken).catch((error: unknown) => {
      laneBroken = true;
      throw error;
    });
  // every lane ends before the run does, even when one of them hits a warehouse error
  const lanes = await Promise.allSettled(Array.from({ length: lanesOf(run, stream) }, lane));
  const broken = lanes.find((l) => l.status === 'rejected');
  if (broken) throw broken.reason;
}

/** One lane: claims the next span and loads it, until the queue is done, the run stops or another lane broke. */
async function runLane(
  run: RunUnderWay,
  name: StreamName,
  stream: StreamDefinition,
  queue: WindowQueue,
  target: SpanTarget,
  waiting: { logged: boolean },
  broken: () => boolean,
): Promise<void> {
  for (let waits = 0; !broken() && !run.stop.reason;) {
    const next = await queue.next();
    if (next === undefined) return;
    if (next !== 'wait') {
      waits = 0;
      await loadClaimedSpan(run, name, stream, next, target);
      continue;
    }
    if (!waiting.logged) {
      waiting.logged = true;
      run.log.info(
        { stream: name },
        'the windows left are held by other workers; waiting for them to finish, or to die and free them',
      );
    }
    await sleep(Math.min(MAX_WAIT_MS, 100 * 2 ** Math.min(waits++, 5)));
    await reapNow(run);
  }
}

/** Waiting on windows held by others: notice a dead holder on this host early instead of after its lease. */
async function reapNow(run: RunUnderWay): Promise<void> {
  const { destination } = run.request;
  if (!destination.capabilities.multiProcess || Date.now() - run.lastReap < MAX_WAIT_MS) return;
  run.lastReap = Date.now();
  await destination.ledgerTransaction((conn) =>
    reapAbandonedRuns(conn, destination.capabilities, {
      host: hostname(),
      pid: process.pid,
      now: new Date().toISOString(),
    }),
  );
}
