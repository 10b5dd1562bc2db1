import type { Day } from '../plan/days.js';
import { planWindows } from '../plan/windows.js';
import type { ReportWindow } from './report-model.js';

/**
 * A stream's windows for the page: the recorded ones, plus a `missing` window for every window of the job's
 * grid (from `firstDay` through `through`, `windowDays` long) that no recorded window overlaps. A recorded
 * window off the grid (the job's window length changed since) is kept as it is and covers the grid windows it
 * overlaps, so loaded days never show as holes.
 *
 * @example
 * windowGrid([doneWindow('2024-05-01')], '2024-05-01', '2024-05-02', 1).map((w) => w.status) // ['done', 'missing']
 */
export function windowGrid(
  recorded: readonly ReportWindow[],
  firstDay: Day,
  through: Day,
  windowDays: number,
): ReportWindow[] {
  const sorted = [...recorded].sort((a, b) => compare(a.start, b.start));
  const out: ReportWindow[] = [...sorted];
  let next = 0;
  let coveredThrough = '';
  for (const planned of planWindows(firstDay, through, windowDays)) {
    while (next < sorted.length && sorted[next]!.start <= planned.end) {
      if (sorted[next]!.end > coveredThrough) coveredThrough = sorted[next]!.end;
      next++;
    }
    if (coveredThrough >= planned.start) continue;
    out.push({
      ...planned,
      status: 'missing',
      extracted: 0,
      loaded: 0,
      rejected: 0,
      requests: 0,
      finishedAt: null,
      runId: null,
      error: null,
    });
  }
  return out.sort((a, b) => compare(a.start, b.start));
}

/**
 * The first day a stream's calendar shows: the job's first day, or the first recorded window before it that holds
 * anything (records, a failure, a pending claim). Windows recorded done and empty before it — the years before
 * the program that the customer directory's sweep counted empty — are not drawn: there is nothing to see in them.
 *
 * @example
 * calendarStart([doneWindow('2000-01-01', { extracted: 0 }), doneWindow('2019-03-04', { extracted: 2 })], '2024-01-01') // '2019-03-04'
 */
export function calendarStart(recorded: readonly ReportWindow[], firstDay: Day): Day {
  let start = firstDay;
  for (const w of recorded)
    if (w.start < start && (w.status !== 'done' || w.extracted > 0 || w.rejected > 0)) start = w.start;
  return start;
}

/**
 * Missing windows before the last window the ledger records (loaded, failed or pending): days a stream skipped, as
 * opposed to days it has not reached yet.
 */
export function countGaps(windows: readonly ReportWindow[]): number {
  let lastRecorded = -1;
  windows.forEach((w, i) => {
    if (w.status !== 'missing') lastRecorded = i;
  });
  return windows.slice(0, Math.max(0, lastRecorded)).filter((w) => w.status === 'missing').length;
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
