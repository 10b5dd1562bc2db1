import type { JobSettings } from '../plan/job-plan.js';

/**
 * Days of windows one span (one commit) of a stream listed by window — accounts, surveys — holds at most. Each
 * window is still read on its own; what the span saves is a commit per window — staging tables, merges, derived
 * objects, ledger writes and a checkpoint each — which for 1-day windows cost more than their rows (a backfill of
 * a year: 12 commits instead of 366). A kill loses at most the span in progress; a source failure in the middle
 * of a span keeps the windows read to their end.
 */
export const LISTING_SPAN_DAYS = 31;

/** Most windows a span of a listing stream holds, for the job's window length: at least one. */
export function listingSpanWindows(job: JobSettings): number {
  return Math.max(1, Math.floor(LISTING_SPAN_DAYS / job.window_days));
}
