import { describe, expect, it } from 'vitest';
import { calendarLayout, cellClass } from '../../src/report/calendar-layout.js';
import { rejectBuckets } from '../../src/report/render-rejects.js';
import type { ReportWindow } from '../../src/report/report-model.js';
import { calendarStart, countGaps, windowGrid } from '../../src/report/window-grid.js';

function recorded(
  start: string,
  end: string,
  status: ReportWindow['status'],
  counts: Partial<ReportWindow> = {},
): ReportWindow {
  return {
    start,
    end,
    status,
    extracted: 10,
    loaded: 10,
    rejected: 0,
    requests: 1,
    finishedAt: '2024-06-01 02:00:00+00',
    runId: 'run-1',
    error: null,
    ...counts,
  };
}

describe('calendarStart', () => {
  it("starts at the job's first day, or earlier at the first window before it that holds anything", () => {
    const emptyYears = [
      recorded('2000-01-01', '2000-01-01', 'done', { extracted: 0, loaded: 0 }),
      recorded('2010-06-01', '2010-06-01', 'done', { extracted: 0, loaded: 0 }),
    ];
    expect(calendarStart(emptyYears, '2024-01-01')).toBe('2024-01-01');
    expect(calendarStart([...emptyYears, recorded('2019-03-04', '2019-03-04', 'done')], '2024-01-01')).toBe(
      '2019-03-04',
    );
    expect(
      calendarStart([...emptyYears, recorded('2021-02-02', '2021-02-02', 'failed', { extracted: 0 })], '2024-01-01'),
    ).toBe('2021-02-02');
  });
});

describe('windowGrid', () => {
  it('puts a never-loaded window wherever the grid has a window and the ledger has none', () => {
    const grid = windowGrid(
      [recorded('2024-05-03', '2024-05-03', 'failed'), recorded('2024-05-01', '2024-05-01', 'done')],
      '2024-05-01',
      '2024-05-05',
      1,
    );
    expect(grid.map((w) => `${w.start} ${w.status}`)).toEqual([
      '2024-05-01 done',
      '2024-05-02 missing',
      '2024-05-03 failed',
      '2024-05-04 missing',
      '2024-05-05 missing',
    ]);
    expect(grid[1]).toMatchObject({ end: '2024-05-02', extracted: 0, runId: null, error: null });
    expect(countGaps(grid)).toBe(1); // 2 May was skipped (3 May was tried); 4 and 5 May are not reached yet
  });

  it('keeps windows recorded off the grid and lets them cover the grid windows they overlap', () => {
    // the job loaded weekly windows, then changed to daily ones
    const grid = windowGrid(
      [recorded('2024-04-28', '2024-05-04', 'done'), recorded('2024-05-07', '2024-05-07', 'done')],
      '2024-05-01',
      '2024-05-08',
      1,
    );
    expect(grid.map((w) => `${w.start}..${w.end} ${w.status}`)).toEqual([
      '2024-04-28..2024-05-04 done',
      '2024-05-05..2024-05-05 missing',
      '2024-05-06..2024-05-06 missing',
      '2024-05-07..2024-05-07 done',
      '2024-05-08..2024-05-08 missing',
    ]);
    expect(countGaps(grid)).toBe(2);
  });

  it('follows a grid of longer windows from the first day, the last one cut at the last day', () => {
    const grid = windowGrid([], '2024-01-01', '2024-01-20', 7);
    expect(grid.map((w) => `${w.start}..${w.end}`)).toEqual([
      '2024-01-01..2024-01-07',
      '2024-01-08..2024-01-14',
      '2024-01-15..2024-01-20',
    ]);
  });
});

describe('calendarLayout', () => {
  it('draws daily windows as a calendar per year, a column per week and a row per weekday from Monday, the latest year on top', () => {
    // 2024-01-01 is a Monday; 2023-12-31 a Sunday
    const windows = ['2023-12-31', '2024-01-01', '2024-01-02', '2024-01-07', '2024-01-08'].map((d) =>
      recorded(d, d, 'done'),
    );
    const layout = calendarLayout(windows, 1);
    expect(layout.cells).toHaveLength(5);
    const [dec31, jan1, jan2, jan7, jan8] = layout.cells;
    expect(jan2!.x).toBe(jan1!.x);
    expect(jan2!.y - jan1!.y).toBe(13);
    expect(jan7!.y - jan1!.y).toBe(6 * 13);
    expect(jan8!.x - jan1!.x).toBe(13);
    expect(jan8!.y).toBe(jan1!.y);
    expect(dec31!.y).toBeGreaterThan(jan7!.y); // 2023 is drawn below 2024
    expect(layout.labels.map((l) => l.text)).toEqual(expect.arrayContaining(['2024', '2023', 'Jan', 'Dec', 'Mon']));
    expect(Math.max(...layout.cells.map((c) => c.x + c.width))).toBeLessThanOrEqual(layout.width);
    expect(Math.max(...layout.cells.map((c) => c.y + c.height))).toBeLessThanOrEqual(layout.height);
  });

  it('draws longer windows one row per year, a cell per window in its place', () => {
    const windows = windowGrid([], '2024-01-01', '2024-12-31', 7);
    const layout = calendarLayout(windows, 7);
    expect(layout.cells).toHaveLength(53);
    expect(new Set(layout.cells.map((c) => c.y)).size).toBe(1);
    expect(new Set(layout.cells.map((c) => c.x)).size).toBe(53);
    expect(layout.cells.every((c) => c.cls === 'm')).toBe(true);
  });

  it('colours a window by its status, and a loaded one by the share of its records rejected', () => {
    expect(cellClass(recorded('2024-01-01', '2024-01-01', 'done', { extracted: 1000, rejected: 0 }))).toBe('d');
    expect(cellClass(recorded('2024-01-01', '2024-01-01', 'done', { extracted: 1000, rejected: 9 }))).toBe('r1');
    expect(cellClass(recorded('2024-01-01', '2024-01-01', 'done', { extracted: 1000, rejected: 10 }))).toBe('r2');
    expect(cellClass(recorded('2024-01-01', '2024-01-01', 'done', { extracted: 1000, rejected: 50 }))).toBe('r3');
    expect(cellClass(recorded('2024-01-01', '2024-01-01', 'failed'))).toBe('f');
    expect(cellClass(recorded('2024-01-01', '2024-01-01', 'pending'))).toBe('p');
    expect(cellClass(recorded('2024-01-01', '2024-01-01', 'missing'))).toBe('m');
  });
});

describe('rejectBuckets', () => {
  const days = [
    { day: '2024-01-02', stream: 'accounts', count: 3 },
    { day: '2024-01-03', stream: 'surveys', count: 1 },
    { day: '2024-03-20', stream: 'accounts', count: 2 },
  ];

  it('counts per day over a short range, every day present', () => {
    const { unit, buckets } = rejectBuckets(days, ['accounts', 'surveys'], '2024-01-01', '2024-03-31');
    expect(unit).toBe('day');
    expect(buckets).toHaveLength(91);
    expect(buckets[1]).toEqual({ start: '2024-01-02', counts: [3, 0] });
    expect(buckets[2]).toEqual({ start: '2024-01-03', counts: [0, 1] });
  });

  it('counts per week from Monday over a year, and per month over several', () => {
    const weekly = rejectBuckets(days, ['accounts', 'surveys'], '2024-01-01', '2024-12-31');
    expect(weekly.unit).toBe('week');
    expect(weekly.buckets[0]).toEqual({ start: '2024-01-01', counts: [3, 1] });
    expect(weekly.buckets.find((b) => b.start === '2024-03-18')).toEqual({ start: '2024-03-18', counts: [2, 0] });
    const monthly = rejectBuckets(days, ['accounts', 'surveys'], '2022-01-01', '2024-12-31');
    expect(monthly.unit).toBe('month');
    expect(monthly.buckets).toHaveLength(36);
    expect(monthly.buckets.find((b) => b.start === '2024-01-01')!.counts).toEqual([3, 1]);
    expect(monthly.buckets.reduce((n, b) => n + b.counts[0]! + b.counts[1]!, 0)).toBe(6);
  });
});
