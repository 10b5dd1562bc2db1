import { afterEach, describe, expect, it } from 'vitest';
import type { Destination } from '../../src/load/destination.js';
import { openDestination } from '../../src/load/warehouses.js';
import type { JobSettings } from '../../src/plan/job-plan.js';
import { planWindows } from '../../src/plan/windows.js';
import { openBackfill } from '../../src/state/backfills.js';
import { beginRun, countLiveRuns, finishRun } from '../../src/state/runs.js';
import { readJobStatus } from '../../src/state/status-report.js';
import { testDestinations } from '../helpers/destinations.js';

const WINDOWS = planWindows('2024-01-01', '2024-01-05', 1);

const JOB: JobSettings = {
  streams: ['accounts'],
  window_days: 1,
  lookback_days: 0,
  first_day: '2024-01-01',
  reject_threshold: 0.5,
  sweep_days: 7,
  postings: { customers: 'all', max_span_days: 31 },
};

describe.each(testDestinations)('live runs on $name', (target) => {
  let destination: Destination | undefined;
  afterEach(async () => {
    await destination?.close();
    destination = undefined;
  });

  async function begin(runId: string, backfillId?: string): Promise<void> {
    await destination!.ledgerTransaction((conn) =>
      beginRun(conn, destination!.capabilities, {
        runId,
        job: 'j',
        command: 'backfill',
        startedAt: new Date().toISOString(),
        host: 'test-host',
        pid: process.pid,
        leaseSeconds: 60,
        backfillId,
      }),
    );
  }

  function finish(runId: string): Promise<void> {
    return destination!.ledgerTransaction((conn) =>
      finishRun(conn, { runId, status: 'succeeded', error: null, requests: 0, finishedAt: new Date().toISOString() }),
    );
  }

  // the count splits the source's rate limit between runs: a run that ended long ago takes no share of it
  it('counts only the runs still running, not every run recorded once one is', async () => {
    destination = await openDestination((await target.fresh()).config);
    for (const night of ['night-1', 'night-2', 'night-3']) {
      await begin(night);
      await finish(night);
    }
    await begin('tonight');
    expect(await destination.withConnection(countLiveRuns)).toBe(1);
    await finish('tonight');
    expect(await destination.withConnection(countLiveRuns)).toBe(0);
  });

  it("status counts a backfill's live workers, not every worker it ever had", async () => {
    destination = await openDestination((await target.fresh()).config);
    // as `backfill` does: the backfill is opened (or joined), then the worker's run begins as one of its workers
    const backfill = await destination.ledgerTransaction((conn) =>
      openBackfill(conn, {
        job: 'j',
        streams: ['accounts'],
        windows: WINDOWS,
        grid: '1d',
        restart: false,
        runId: 'worker-a',
      }),
    );
    await begin('worker-a', backfill.backfillId);
    await finish('worker-a');
    await begin('worker-b', backfill.backfillId);
    const status = await destination.withConnection((conn) => readJobStatus(conn, 'j', JOB, '2024-01-05'));
    expect(status.backfills).toEqual([expect.objectContaining({ backfillId: backfill.backfillId, liveWorkers: 1 })]);
  });
});
