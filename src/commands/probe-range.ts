import { addDays, daysBetween, type Day } from '../plan/days.js';

/** Days the probe looks at: a range of survey answers. */
export interface ProbeRange {
  start: Day;
  end: Day;
}

/** The days the probe looks at, and where it found them when not in the last 30 days. */
export interface FoundRange {
  range: ProbeRange;
  /** The last day holding an answer, when the 30 days through `through` hold none. */
  lastAnswerDay?: Day;
  /** Whether any day from `from` through `through` holds an answer (as far as the counts could tell). */
  anyAnswers: boolean;
}

/**
 * The 30 days the probe looks at: those through `through`, or — when they hold no survey answer — the 30 days
 * through the last day from `from` on that holds one, found by halving the days before them (a count request each,
 * about 14 for 40 years). `count` gives the answers a range holds (null when the service would not say).
 */
export async function rangeWithAnswers(
  count: (range: ProbeRange) => Promise<number | null>,
  from: Day,
  through: Day,
): Promise<FoundRange> {
  const recent = { start: addDays(through, -29), end: through };
  const inRecent = await count(recent);
  if (inRecent === null || inRecent > 0) return { range: recent, anyAnswers: inRecent !== 0 };
  if (from >= recent.start) return { range: recent, anyAnswers: false };
  let [lo, hi] = [from, addDays(recent.start, -1)];
  if (!(await count({ start: lo, end: hi }))) return { range: recent, anyAnswers: false };
  // [lo, hi] holds an answer: halve it, keeping the later half whenever it holds one
  while (lo < hi) {
    const mid = addDays(lo, Math.floor(daysBetween(lo, hi) / 2));
    const later = { start: addDays(mid, 1), end: hi };
    if (await count(later)) lo = later.start;
    else hi = mid;
  }
  return { range: { start: addDays(lo, -29), end: lo }, lastAnswerDay: lo, anyAnswers: true };
}
