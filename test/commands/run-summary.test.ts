import { describe, expect, it } from 'vitest';
import { runJson, summarizeRun } from '../../src/commands/run-summary.js';
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

  it('says what the run changed of what analysts read, the changes to react to first, and counts the rest', () => {
    const added = (i: number) => ({
      changed_at: '2026-11-29 03:00:00+00',
      run_id: 'r-1',
      object_name: 'accounts',
      column_name: `cf_f${i}`,
      change: 'column_added',
      from_type: null,
      to_type: 'text',
      source_key: `f${i}`,
      reason: `a new key "f${i}" of the source`,
      value_count: null,
    });
    const drift = {
      ...added(0),
      object_name: 'accounts_typed',
      column_name: 'cf_visits_number',
      change: 'values_no_longer_fit',
      from_type: 'double',
      source_key: 'visits',
      reason: 'its values now read as text: 12 are NULL here',
      value_count: 12,
    };
    const lines = summarizeRun({
      ...result,
      schemaChanges: [...Array.from({ length: 11 }, (_, i) => added(i)), drift],
    }).split('\n');
    const at = lines.indexOf('schema of what analysts read: 12 changes (see _etl_schema_changes)');
    expect(at).toBeGreaterThan(0);
    expect(lines[at + 1]).toBe(
      '  accounts_typed.cf_visits_number: values no longer fit (double → text): its values now read as text: 12 are NULL here',
    );
    expect(lines[at + 11]).toBe('  and 2 more');
    expect(summarizeRun(result)).not.toContain('schema of what analysts read');
  });
});

describe('the summary of a run that failed or stopped early', () => {
  const failed: JobRunResult = {
    runId: 'r-2',
    loaded: loaded('accounts', 2, 40, 40),
    directory: { loaded: loaded('accounts', 1, 12, 12), empty: 9132, from: '2000-01-01', through: '2024-04-30' },
    empty: new Map(),
    failed: [
      { stream: 'vouchers', window: { start: '2026-11-01', end: '2026-11-01' }, error: 'HTTP 500' },
      { stream: 'vouchers', window: { start: '2026-11-02', end: '2026-11-02' }, error: 'HTTP 500' },
    ],
    requests: 90,
    retries: 7,
    newFields: [],
  };

  it('names each stream’s failures and what it did not attempt, and says the directory’s sweep in words', () => {
    const lines = summarizeRun(failed, 3, new Map([['surveys', 5]])).split('\n');
    expect(lines[0]).toBe(
      "customer directory, swept once so that every customer is known from 2000-01-01 (source.history_start) through 2024-04-30: 1 accounts window read (12 account versions); 9,132 windows held no account by the source's own count, so they were recorded done without reading them",
    );
    expect(lines).toContain(
      'vouchers: 0 windows read, 0 customer voucher lists read, 0 vouchers loaded, 0 rejected; 2 windows FAILED (first: 2026-11-01: HTTP 500)',
    );
    expect(lines).toContain(
      'surveys: 0 windows read, 0 survey responses read, 0 loaded, 0 rejected; 5 windows not attempted, left for the next run',
    );
    expect(lines.at(-1)).toBe('90 source requests (7 retries) in 3.0 s, run r-2');
  });

  it('is one JSON object with --json', () => {
    const json = JSON.parse(runJson(failed, 3)) as Record<string, unknown>;
    expect(json).toMatchObject({
      runId: 'r-2',
      requests: 90,
      retries: 7,
      streams: { vouchers: { failed: 2 }, accounts: { windows: 2, loaded: 40 } },
      directory: { windowsRead: 1, windowsEmpty: 9132 },
    });
    expect(json.failed).toHaveLength(2);
  });
});
