import type { Destination } from '../load/destination.js';
import type { Logger } from '../log/logger.js';
import { renewRun } from '../state/runs.js';

/** A timer renewing a run's lease; `stop` ends it. */
export interface LeaseKeeper {
  stop(): void;
}

/**
 * Renews the run's lease three times per lease length, so a pause of a renewal or two never lets it lapse while
 * the process lives; once the process dies, other workers take over its windows after at most one lease.
 */
export function keepLease(destination: Destination, runId: string, leaseSeconds: number, logger: Logger): LeaseKeeper {
  let renewing = false;
  let warned = false;
  const timer = setInterval(
    () => {
      if (renewing) return;
      renewing = true;
      destination
        .ledgerTransaction((conn) => renewRun(conn, runId, leaseSeconds))
        .then((alive) => {
          if (!alive && !warned) {
            warned = true;
            logger.warn(
              { runId },
              'another worker took this run for dead (its lease had run out); windows it held may be loaded by others, and its commits of them are refused',
            );
          }
        })
        .catch((error) => logger.warn({ err: error }, 'could not renew the run lease'))
        .finally(() => (renewing = false));
    },
    Math.max(200, (leaseSeconds * 1000) / 3),
  );
  timer.unref();
  return { stop: () => clearInterval(timer) };
}
