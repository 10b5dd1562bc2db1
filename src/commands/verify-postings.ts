import type { Destination } from '../load/destination.js';
import type { JobSettings } from '../plan/job-plan.js';
import { firstPeriodEnd, stateCoverage, type StateCoverage } from '../state/state-coverage.js';

/** What `verify` says of the postings selection: what it proves, what can be missing and for how long. */
export interface PostingsCheck {
  selection: JobSettings['postings']['customers'];
  sweepDays: number | null;
  /** The sweep's coverage of the customer directory, with a sweep. */
  coverage: StateCoverage | null;
  /** While the first period of a `first_night: sweep` job runs: when it ends (ISO UTC). */
  firstPeriodEnds: string | null;
  /** What can be missing, and for how long. */
  bound: string;
  /** Null when the selection keeps its promise; otherwise what is wrong. */
  gap: string | null;
}

/**
 * The postings proof beyond each window's rows: with `changed` or `webhook` and `postings.sweep_days`, every
 * customer in `accounts` must have had its postings asked within the last `sweep_days` days (what the sweep
 * promises); a `first_night: sweep` job's customers never asked yet are accepted until `sweep_days` days after
 * its first observation. Without a sweep, what a cheap selection can miss has no bound, and `verify` says so.
 */
export async function checkPostingsSelection(
  destination: Destination,
  job: JobSettings,
  now: Date,
): Promise<PostingsCheck> {
  const selection = job.postings.customers;
  const sweepDays = job.postings.sweep_days ?? null;
  // without a sweep there is no coverage to measure: only the bound is said
  const unmeasured = (bound: string): PostingsCheck => ({
    selection,
    sweepDays,
    coverage: null,
    firstPeriodEnds: null,
    gap: null,
    bound,
  });
  if (selection === 'all')
    return unmeasured(
      'customers: all asks every customer for each window: a posting is missing only if the service did not list it when its window was read',
    );
  const missed =
    selection === 'changed'
      ? 'postings of customers whose account did not change in their window'
      : 'postings whose customer no webhook event named';
  if (sweepDays === null)
    return unmeasured(
      `customers: ${selection} without postings.sweep_days: ${missed} are never read; nothing bounds how long they stay missing (set postings.sweep_days)`,
    );
  return destination.withConnection(async (conn) => {
    const coverage = await stateCoverage(conn, 'loyalty_postings', sweepDays, now);
    const firstPeriodEnds =
      job.first_night === 'sweep' ? await firstPeriodEnd(conn, 'loyalty_postings', sweepDays, now) : null;
    const bound =
      `customers: ${selection} with a sweep of ${sweepDays} night(s): ${missed} are loaded when the sweep next asks the customer, ` +
      `at most ${sweepDays} night(s) later (the sweep reads each customer's postings since it was last asked, less the look-back and a day)`;
    const stale = coverage.customers - coverage.observedWithin;
    // a first night left to the sweep: customers never asked are still in their first period
    const waiting = firstPeriodEnds !== null ? coverage.neverObserved : 0;
    const gap =
      stale - waiting === 0
        ? null
        : `${stale - waiting} customer(s) whose postings were not asked within the last ${sweepDays} day(s); first: ${coverage.firstStale} (the next runs' sweep asks the oldest first)`;
    return { selection, sweepDays, coverage, firstPeriodEnds, bound, gap };
  });
}

/** The human form of the postings selection's check. */
export function postingsCheckLines(check: PostingsCheck): string[] {
  const lines = [`loyalty_postings: ${check.bound}`];
  const c = check.coverage;
  if (c) {
    lines.push(
      `loyalty_postings: ${c.observedWithin} of ${c.customers} customers' postings asked within the last ${c.sweepDays} day(s) (postings.sweep_days)`,
    );
    if (check.firstPeriodEnds !== null && c.neverObserved > 0)
      lines.push(
        `loyalty_postings: ${c.neverObserved} customer(s) never asked yet, accepted: first_night: sweep leaves them to the sweep until ${check.firstPeriodEnds.slice(0, 19)}Z`,
      );
  }
  return lines;
}
