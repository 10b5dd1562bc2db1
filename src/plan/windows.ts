import { addDays, type Day } from './days.js';

/** A range of whole days in the source's zone, both ends included. */
export interface Window {
  start: Day;
  end: Day;
}

/**
 * Splits `[from, to]` into windows of `days` days, aligned on `from`; the last one may be shorter.
 *
 * @example
 * planWindows('2024-01-01', '2024-01-05', 2)
 * // [{start:'2024-01-01',end:'2024-01-02'}, {start:'2024-01-03',end:'2024-01-04'}, {start:'2024-01-05',end:'2024-01-05'}]
 */
export function planWindows(from: Day, to: Day, days: number): Window[] {
  if (days < 1) throw new RangeError('window length must be at least one day');
  const windows: Window[] = [];
  for (let start = from; start <= to; start = addDays(start, days)) {
    const end = addDays(start, days - 1);
    windows.push({ start, end: end < to ? end : to });
  }
  return windows;
}

/** Joins consecutive windows into spans of at most `maxDays` days (a span is fetched once and committed once). */
export function groupWindows(windows: Window[], maxDays: number): Window[][] {
  const spans: Window[][] = [];
  let current: Window[] = [];
  for (const w of windows) {
    const first = current[0];
    const contiguous = current.length === 0 || addDays(current[current.length - 1]!.end, 1) === w.start;
    if (first && (!contiguous || addDays(first.start, maxDays - 1) < w.end)) {
      spans.push(current);
      current = [];
    }
    current.push(w);
  }
  if (current.length > 0) spans.push(current);
  return spans;
}

export function formatWindow(w: Window): string {
  return w.start === w.end ? w.start : `${w.start}..${w.end}`;
}
