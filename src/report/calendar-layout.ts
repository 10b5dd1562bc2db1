import { dayNumber, weekday, type Day } from '../plan/days.js';
import type { ReportWindow } from './report-model.js';

/** Where one window's cell sits, and its class (its colour: see {@link cellClass}). */
export interface CalendarCell {
  x: number;
  y: number;
  width: number;
  height: number;
  cls: string;
}

/** A text label of the calendar (a year, a month, a weekday). */
export interface CalendarLabel {
  x: number;
  y: number;
  text: string;
}

/** A stream's calendar: one cell per window, in the order of the windows. */
export interface CalendarLayout {
  width: number;
  height: number;
  cells: CalendarCell[];
  labels: CalendarLabel[];
}

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
/** Room on the left for the year and weekday labels. */
const LEFT = 36;
const MONTH_ROW = 14;

/**
 * The class of a window's cell: `d` done without rejects; `r1`, `r2`, `r3` done with under 1%, under 5%, and 5%
 * or more of its records rejected; `f` failed; `p` pending; `m` never loaded.
 */
export function cellClass(w: ReportWindow): string {
  if (w.status === 'failed') return 'f';
  if (w.status === 'pending') return 'p';
  if (w.status === 'missing') return 'm';
  if (w.rejected === 0) return 'd';
  const share = w.extracted > 0 ? w.rejected / w.extracted : 1;
  return share < 0.01 ? 'r1' : share < 0.05 ? 'r2' : 'r3';
}

/**
 * Lays out a stream's windows, the most recent year on top. Daily windows form a calendar per year (a column
 * per week, a row per weekday, Monday first), the way a year of nights is read at a glance; longer windows sit
 * in one row per year, a cell per window at its place in the year.
 */
export function calendarLayout(windows: readonly ReportWindow[], windowDays: number): CalendarLayout {
  const years = [...new Set(windows.map((w) => yearOf(w.start)))].sort((a, b) => b - a);
  const top = new Map<number, number>();
  const daily = windowDays === 1;
  const slots = Math.ceil(366 / windowDays);
  const pitch = daily ? 13 : Math.max(4, Math.min(13, Math.floor(720 / slots)));
  const size = daily ? { width: 11, height: 11 } : { width: pitch >= 8 ? pitch - 2 : pitch - 1, height: 14 };
  const blockHeight = daily ? MONTH_ROW + 7 * pitch + 10 : MONTH_ROW + 18 + 6;
  for (const [i, year] of years.entries()) top.set(year, i * blockHeight);

  // daily: weeks since the Monday on or before 1 January; longer: windows since 1 January
  const column = (day: Day, year: number) => {
    const jan1 = dayNumber(`${year}-01-01`);
    return daily
      ? Math.floor((dayNumber(day) - (jan1 - weekday(`${year}-01-01`))) / 7)
      : Math.floor((dayNumber(day) - jan1) / windowDays);
  };
  const cells = windows.map((w): CalendarCell => {
    const year = yearOf(w.start);
    const y0 = top.get(year)! + MONTH_ROW;
    return {
      x: LEFT + column(w.start, year) * pitch,
      y: y0 + (daily ? weekday(w.start) * pitch : 0),
      ...size,
      cls: cellClass(w),
    };
  });

  const labels: CalendarLabel[] = [];
  for (const year of years) {
    const y0 = top.get(year)!;
    labels.push({ x: 0, y: y0 + 10, text: String(year) });
    for (const [m, month] of MONTHS.entries())
      labels.push({
        x: LEFT + column(`${year}-${String(m + 1).padStart(2, '0')}-01`, year) * pitch,
        y: y0 + 10,
        text: month,
      });
    if (daily)
      for (const [row, name] of [
        [0, 'Mon'],
        [2, 'Wed'],
        [4, 'Fri'],
      ] as const)
        labels.push({ x: 0, y: y0 + MONTH_ROW + row * pitch + 9, text: name });
  }
  const columns = daily ? 54 : slots + 1;
  return { width: LEFT + columns * pitch, height: Math.max(years.length * blockHeight, blockHeight), cells, labels };
}

function yearOf(day: Day): number {
  return Number(day.slice(0, 4));
}
