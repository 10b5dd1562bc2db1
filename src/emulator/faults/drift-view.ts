import type { DataViewContext, DataViewHook, ExportPageView } from '../http/export-page-view.js';
import type { ResolvedFaults } from './fault-options.js';
import { driftRandom } from './request-dice.js';

/**
 * How a drifting listing looks to one page read, relative to its settled content; `at` is a position in
 * front of the page being read, so the reader meets the classic offset-paging failures:
 * - `insert`: a record appeared at `at` — the page starts with the last record of the previous page again,
 *   and `totalCount` is one more;
 * - `delete`: the record at `at` vanished — the page skips the record that should have opened it, and
 *   `totalCount` is one less;
 * - `move`: the record at `at` was re-saved and moved to the end — the page skips a record and the last page
 *   repeats an earlier one, with `totalCount` unchanged (only keys can tell; used for accounts only).
 */
export type DriftChange = { kind: 'insert' | 'delete' | 'move'; at: number };

/** The view of `view` after `change` (positions are 0-based; `change.at` < totalCount). */
export function driftedView(view: ExportPageView, change: DriftChange): ExportPageView {
  const n = view.totalCount;
  const { kind, at } = change;
  const source = (i: number): number => {
    if (i < at) return i;
    if (kind === 'insert') return i === at ? at : i - 1; // the new record is a copy of its neighbour
    if (kind === 'delete') return i + 1;
    return i < n - 1 ? i + 1 : at; // move: everything after `at` shifts up, `at` lands last
  };
  return {
    totalCount: kind === 'insert' ? n + 1 : kind === 'delete' ? n - 1 : n,
    records: (from, to) =>
      Array.from({ length: to - from }, (_, k) => view.records(source(from + k), source(from + k) + 1)[0]),
  };
}

/** Names a listing for the drift generator: the same window or customer drifts the same way on every run. */
function listingName(context: DataViewContext): string {
  return context.stream === 'postings'
    ? `postings ${context.customerId}`
    : `${context.stream} ${context.start}..${context.end}`;
}

/**
 * The drift fault as a data view: a share `driftRate` of listings (chosen from the fault seed and the
 * listing's name) is seen changed by its first `driftReads` reads of a page other than the first; every
 * other read sees the settled listing. Accounts, whose records carry a key, may also see a `move`; surveys
 * and postings only `insert` and `delete`, which change `totalCount`.
 */
export function driftView(
  faults: () => ResolvedFaults,
  onDrift: (listing: string, change: DriftChange) => void,
): { hook: DataViewHook; reset(): void } {
  const changedReads = new Map<string, number>();
  const hook: DataViewHook = (view, context) => {
    const { seed, driftRate, driftReads } = faults();
    if (driftRate <= 0 || context.page < 2) return view;
    const from = (context.page - 1) * context.size;
    if (from >= view.totalCount) return view;
    const listing = listingName(context);
    if (!driftRandom(seed, listing, 0).chance(driftRate)) return view;
    const done = changedReads.get(listing) ?? 0;
    if (done >= driftReads) return view;
    changedReads.set(listing, done + 1);
    const random = driftRandom(seed, listing, done + 1);
    const change: DriftChange = {
      kind: random.pick(
        context.stream === 'accounts' ? (['insert', 'delete', 'move'] as const) : (['insert', 'delete'] as const),
      ),
      at: random.int(0, from - 1),
    };
    onDrift(listing, change);
    return driftedView(view, change);
  };
  return { hook, reset: () => changedReads.clear() };
}
