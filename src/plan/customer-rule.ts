import type { Day } from './days.js';

/**
 * Which customers a per-customer stream asks for a span, as its declaration states it:
 * - `all`, `changed`, `webhook`: the postings selections (`jobs.<job>.postings.customers`); with `sweep` (for
 *   `changed` and `webhook`, `postings.sweep_days`), each span also asks the customers whose postings were asked
 *   longest ago, as the state streams' sweep does;
 * - `signs-and-sweep`: the state streams' selection — every customer with a sign of change in the span (an
 *   account change, a posting, a webhook event) plus the rolling sweep that asks every customer at least once in
 *   `sweepDays` nights (`jobs.<job>.sweep_days`); with `firstNightSweep` (`first_night: sweep`), a first night (no
 *   customer observed by the stream yet) asks the sweep's quota alone, every customer being new then.
 */
export type CustomerRule =
  | { kind: 'all' | 'changed' | 'webhook'; sweep?: PostingsSweep | undefined }
  | { kind: 'signs-and-sweep'; sweepDays: number; firstNightSweep?: boolean | undefined };

/** The postings sweep of a cheap selection. */
export interface PostingsSweep {
  sweepDays: number;
  /** `jobs.<job>.first_night: sweep`: a `webhook` job's first span asks the sweep instead of every customer. */
  firstNightSweep: boolean;
  /**
   * Where a swept customer's postings are kept from: the last day of the span that last asked it less
   * `lookbackDays` (postings dated late), never before `firstDay`; `firstDay` when it was never asked.
   */
  firstDay: Day;
  lookbackDays: number;
}
