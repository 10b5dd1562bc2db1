import { describe, expect, it } from 'vitest';
import { summarizeRun } from '../../src/commands/run-summary.js';
import type { JobRunResult } from '../../src/pipeline/job-run-request.js';
import type { StreamName } from '../../src/plan/job-plan.js';

/** A run that loaded `windows` windows of a stream, with these totals spread over them. */
function loaded(stream: StreamName, windows: number, extracted: number, rows: number): JobRunResult['loaded'] {
  return Array.from({ length: windows }, (_, i) => {
    const day = `2026-11-${String(i + 1).padStart(2, '0')}`;
    return {
      stream,
      window: { start: day, end: day },
      extracted: i === 0 ? extracted : 0,
      loaded: i === 0 ? rows : 0,
      rejected: 0,
      requests: 0,
    };
  });
}

describe('the summary a run prints', () => {
  const result: JobRunResult = {
    runId: 'r-1',
    loaded: [
      ...loaded('accounts', 3, 605, 605),
      ...loaded('loyalty_status', 2, 386, 386),
      ...loaded('vouchers', 2, 386, 512),
    ],
    directory: { loaded: [], empty: 0 },
    empty: new Map(),
    failed: [],
    requests: 1611,
    retries: 0,
    newFields: [],
  };

  it('says what each count counts: a state stream reads one answer per customer, and vouchers load vouchers', () => {
    const lines = summarizeRun(result, 41.2).split('\n');
    expect(lines).toContain('accounts: 3 windows read, 605 account versions read, 605 loaded, 0 rejected');
    expect(lines).toContain('loyalty_status: 2 windows read, 386 customer loyalty states read, 386 loaded, 0 rejected');
    expect(lines).toContain(
      'vouchers: 2 windows read, 386 customer voucher lists read, 512 vouchers loaded, 0 rejected',
    );
  });

  it('ends with the requests made and how long the run took', () => {
    expect(summarizeRun(result, 41.2).split('\n').at(-1)).toBe('1,611 source requests in 41 s, run r-1');
    expect(summarizeRun(result, 109).split('\n').at(-1)).toBe('1,611 source requests in 1 min 49 s, run r-1');
    expect(summarizeRun(result).split('\n').at(-1)).toBe('1,611 source requests, run r-1');
  });
});
