import type { JobSettings } from './job-plan.js';
import { addDays, daysBetween, maxDay, type Day } from './days.js';
import { planWindows, type Window } from './windows.js';

/**
 * The first day of the window that holds `day`, on the job's grid: windows of `window_days` days laid from
 * `first_day`, forwards and backwards, so a day before `first_day` has a window too.
 */
export function windowStartOf(job: JobSettings, day: Day): Day {
  const offset = daysBetween(job.first_day, day);
  const k = Math.floor(offset / job.window_days);
  return addDays(job.first_day, k * job.window_days);
}

/**
 * Windows of an incremental run: from the watermark (less the look-back) to `through`, on the job's grid.
 * Before the first run the job's first day is the start.
 */
export function planIncrementalWindows(job: JobSettings, watermark: Day | undefined, through: Day): Window[] {
  const from =
    watermark === undefined ? job.first_day : maxDay(job.first_day, addDays(watermark, 1 - job.lookback_days));
  return planRange(job, from, through);
}

/**
 * Windows on the job's grid that cover `[from, to]`, before `first_day` too; the first may start before `from` to
 * stay on the grid.
 */
export function planRange(job: JobSettings, from: Day, to: Day): Window[] {
  // nothing is asked for (e.g. the watermark already stands at `to`): not even the window holding `to`
  if (from > to) return [];
  return planWindows(windowStartOf(job, from), to, job.window_days);
}

/**
 * The accounts windows of the customer directory through `through`: every window of the job's grid from the one
 * holding `historyStart` (the program's first day) on. Together they list every customer the source has.
 */
export function directoryWindows(job: JobSettings, historyStart: Day, through: Day): Window[] {
  return planRange(job, historyStart, through);
}
