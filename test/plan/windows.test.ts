import { describe, expect, it } from 'vitest';
import type { JobSettings } from '../../src/plan/job-plan.js';
import { lastClosedDay } from '../../src/plan/days.js';
import { planIncrementalWindows, planRange } from '../../src/plan/plan-windows.js';
import { groupWindows, planWindows } from '../../src/plan/windows.js';

const job = (overrides: Partial<JobSettings> = {}): JobSettings => ({
  streams: ['accounts'],
  window_days: 1,
  lookback_days: 2,
  first_day: '2024-01-01',
  reject_threshold: 0.1,
  sweep_days: 7,
  postings: { customers: 'all', max_span_days: 31 },
  ...overrides,
});

describe('windows', () => {
  it('splits a range into whole-day windows, the last one shorter', () => {
    expect(planWindows('2024-02-27', '2024-03-02', 2)).toEqual([
      { start: '2024-02-27', end: '2024-02-28' },
      { start: '2024-02-29', end: '2024-03-01' },
      { start: '2024-03-02', end: '2024-03-02' },
    ]);
  });

  it('starts an incremental run at the watermark less the look-back, never before the first day', () => {
    expect(planIncrementalWindows(job(), undefined, '2024-01-03').map((w) => w.start)).toEqual([
      '2024-01-01',
      '2024-01-02',
      '2024-01-03',
    ]);
    expect(planIncrementalWindows(job(), '2024-01-10', '2024-01-11').map((w) => w.start)).toEqual([
      '2024-01-09',
      '2024-01-10',
      '2024-01-11',
    ]);
    expect(planIncrementalWindows(job({ lookback_days: 0 }), '2024-01-11', '2024-01-11')).toEqual([]);
    expect(planIncrementalWindows(job(), '2024-01-01', '2024-01-02').map((w) => w.start)).toEqual([
      '2024-01-01',
      '2024-01-02',
    ]);
  });

  it('keeps windows on the grid that starts at the first day', () => {
    expect(planRange(job({ window_days: 7 }), '2024-01-10', '2024-01-20')).toEqual(
      [
        { start: '2024-01-08', end: '2024-01-14' },
        { start: '2024-01-15', end: '2024-01-21' },
      ].map((w) => (w.end > '2024-01-20' ? { ...w, end: '2024-01-20' } : w)),
    );
  });

  it('groups consecutive windows into spans of bounded days', () => {
    const spans = groupWindows(planWindows('2024-01-01', '2024-01-10', 1), 4);
    expect(spans.map((s) => s.length)).toEqual([4, 4, 2]);
  });
});

describe('the end of a run', () => {
  it('is the last day that has ended in the source zone', () => {
    // 22:30 UTC on 10 March is already 11 March in Athens (UTC+2) and still 10 March in UTC and New York
    const now = new Date('2024-03-10T22:30:00Z');
    expect(lastClosedDay('Europe/Athens', now)).toBe('2024-03-10');
    expect(lastClosedDay('UTC', now)).toBe('2024-03-09');
    expect(lastClosedDay('America/New_York', now)).toBe('2024-03-09');
    expect(lastClosedDay('Pacific/Kiritimati', new Date('2024-03-10T09:59:00Z'))).toBe('2024-03-09');
    expect(lastClosedDay('Pacific/Kiritimati', new Date('2024-03-10T10:00:00Z'))).toBe('2024-03-10');
  });

  it('with a watermark: re-reads the look-back, on the grid of the first day; without: starts at the first day', () => {
    const weekly = job({ window_days: 7, lookback_days: 3, first_day: '2024-01-03' });
    expect(planIncrementalWindows(weekly, undefined, '2024-01-20')).toEqual([
      { start: '2024-01-03', end: '2024-01-09' },
      { start: '2024-01-10', end: '2024-01-16' },
      { start: '2024-01-17', end: '2024-01-20' },
    ]);
    // watermark 2024-01-16, look-back 3: from 2024-01-14, which lies in the window of 2024-01-10
    expect(planIncrementalWindows(weekly, '2024-01-16', '2024-01-23').map((w) => w.start)).toEqual([
      '2024-01-10',
      '2024-01-17',
    ]);
    // up to date in the middle of a window: nothing to read again until a day closes
    expect(planIncrementalWindows({ ...weekly, lookback_days: 0 }, '2024-01-20', '2024-01-20')).toEqual([]);
    expect(planIncrementalWindows({ ...weekly, lookback_days: 0 }, '2024-01-20', '2024-01-21')).toEqual([
      { start: '2024-01-17', end: '2024-01-21' },
    ]);
  });
});
