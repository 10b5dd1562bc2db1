import type { JobConfig } from '../config/config-schema.js';
import { addDays, daysBetween, maxDay, type Day } from './days.js';
import { planWindows, type Window } from './windows.js';

/** The first day of the window (on the job's grid, which starts at `first_day`) that holds `day`. */
export function windowStartOf(job: JobConfig, day: Day): Day {
  const offset = daysBetween(job.first_day, day);
  const k = Math.floor(offset / job.window_days);
  return addDays(job.first_day, k * job.window_days);
}

/**
 * Windows of an incremental run: from the watermark (less the look-back) to `through`, on the job's grid.
 * Before the first run the job's first day is the start.
 */
export function planIncrementalWindows(job: JobConfig, watermark: Day | undefined, through: Day): Window[] {
  const from = watermark === undefined ? job.first_day : maxDay(job.first_day, addDays(watermark, 1 - job.lookback_days));
  return planRange(job, from, through);
}

/** Windows on the job's grid that cover `[from, to]`; the first may start before `from` to stay on the grid. */
export function planRange(job: JobConfig, from: Day, to: Day): Window[] {
  const first = maxDay(from, job.first_day);
  // nothing is asked for (e.g. the watermark already stands at `to`): not even the window holding `to`
  if (first > to) return [];
  const start = windowStartOf(job, first);
  return planWindows(start, to, job.window_days);
}
