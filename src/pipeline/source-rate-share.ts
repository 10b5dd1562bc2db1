import { setTimeout as sleep } from 'node:timers/promises';
import type { Destination } from '../load/destination.js';
import type { Logger } from '../log/logger.js';
import type { SourceClient } from '../source/loyalty-api.js';
import { countLiveRuns } from '../state/runs.js';

/** How often a run counts the live runs it shares the source with. */
const RECOUNT_MS = 1000;
/**
 * A run that finds others alive waits this long before its first request, so that each of them has counted it
 * (and lowered its own share) first: two recounts and the time they take.
 */
const JOIN_WAIT_MS = 2 * RECOUNT_MS + 500;
/** A higher share is taken only once the lower count has held this long: a run that just ended has sent its last requests within a second. */
const RAISE_AFTER_MS = RECOUNT_MS + 100;

/** The share of the source's rate limit a run has while it lives. */
export interface SourceRateShare {
  stop(): void;
}

/** `perSecond` split between `runs`: whole requests per second where the limit allows, so no share rounds up. */
export function rateShare(perSecond: number, runs: number): number {
  const n = Math.max(1, runs);
  return perSecond >= n ? Math.floor(perSecond / n) : perSecond / n;
}

/**
 * `source.requests_per_second` is the service's limit, one for everyone: runs sharing a warehouse several
 * processes write (PostgreSQL) — the workers of a shared backfill, a nightly run beside them — split it between
 * the live runs recorded in `_etl_runs`. Each counts them every second and sets its client to its share: a
 * lower share at once, a higher one after a second (the run that ended may have sent requests in the last one).
 * A run that finds others alive sends nothing until they have had time to count it, and counts again before its
 * first request, so that runs that joined while it waited have lowered its share too. On DuckDB one process holds
 * the file, so a run has the whole limit.
 */
export async function shareSourceRate(
  destination: Destination,
  http: SourceClient,
  perSecond: number,
  logger: Logger,
): Promise<SourceRateShare> {
  if (!destination.capabilities.multiProcess) return { stop: () => undefined };
  const count = () => destination.ledgerTransaction((conn) => countLiveRuns(conn));
  let share = rateShare(perSecond, await count());
  http.setRequestsPerSecond(share);
  let higherSince: number | undefined;
  const take = (runs: number) => {
    const next = rateShare(perSecond, runs);
    if (next > share) {
      higherSince ??= performance.now();
      if (performance.now() - higherSince < RAISE_AFTER_MS) return;
    }
    higherSince = undefined;
    if (next === share) return;
    share = next;
    http.setRequestsPerSecond(share);
    logger.debug({ requestsPerSecond: share, runs }, 'share of the source rate limit changed');
  };
  let counting: Promise<void> | undefined;
  const recount = () =>
    (counting ??= count()
      .then(take)
      .catch((error: unknown) =>
        logger.warn({ err: error }, 'could not count the runs sharing the source; the rate share stays'),
      )
      .finally(() => (counting = undefined)));
  // Counted from the start, the join wait included: a run about to send must know of those that joined meanwhile.
  const timer = setInterval(() => void recount(), RECOUNT_MS);
  timer.unref();
  if (share < perSecond) {
    logger.info(
      { requestsPerSecond: share, limit: perSecond },
      'other runs use the source: this one takes its share of the rate limit',
    );
    await sleep(JOIN_WAIT_MS);
    // a count begun after the wait: the first request goes at the share of every run alive by then
    await counting;
    await recount();
  }
  return { stop: () => clearInterval(timer) };
}
