import { afterEach, describe, expect, it } from 'vitest';
import { commitWindows } from '../../src/pipeline/load-span.js';
import type { Destination } from '../../src/load/destination.js';
import { openDestination } from '../../src/load/warehouses.js';
import { planWindows, type Window } from '../../src/plan/windows.js';
import { openBackfill, type Backfill } from '../../src/state/backfills.js';
import { beginRun } from '../../src/state/runs.js';
import { backfillWindowCounts, claimNextSpans } from '../../src/state/window-claims.js';
import { accountsStream } from '../../src/streams/accounts.js';
import { account } from '../helpers/account-spans.js';
import { testDestinations } from '../helpers/destinations.js';
import { ClaimLostError } from '../../src/state/state-errors.js';

const WINDOWS = planWindows('2024-01-01', '2024-01-30', 1);

describe.each(testDestinations)('window claims on $name', (target) => {
  const open: Destination[] = [];
  afterEach(async () => {
    for (const d of open.splice(0)) await d.close();
  });

  /** A warehouse, and a second handle on it (another process's pool on PostgreSQL; the same one on DuckDB). */
  async function warehouse(): Promise<[Destination, Destination]> {
    const { config } = await target.fresh();
    const first = await openDestination(config);
    open.push(first);
    if (target.name === 'duckdb') return [first, first];
    const second = await openDestination(config);
    open.push(second);
    return [first, second];
  }

  async function worker(destination: Destination, runId: string, pid: number): Promise<void> {
    await destination.ledgerTransaction((conn) =>
      beginRun(conn, destination.capabilities, {
        runId,
        job: 'j',
        command: 'backfill',
        startedAt: new Date().toISOString(),
        host: 'test-host',
        pid,
        leaseSeconds: 60,
      }),
    );
  }

  function claim(destination: Destination, runId: string, backfill: Backfill, spans = 2): Promise<Window[][]> {
    return destination.ledgerTransaction((conn) =>
      claimNextSpans(
        conn,
        destination.capabilities,
        { job: 'j', stream: 'accounts', runId, backfillId: backfill.backfillId, from: backfill.from, to: backfill.to },
        { maxDays: 3, maxWindows: 3, spans },
      ),
    );
  }

  it('gives workers claiming at the same instant different windows, in spans of consecutive days', async () => {
    const [a, b] = await warehouse();
    await worker(a, 'run-a', process.pid);
    await worker(b, 'run-b', process.pid);
    const backfill = await a.ledgerTransaction((conn) =>
      openBackfill(conn, {
        job: 'j',
        streams: ['accounts'],
        windows: WINDOWS,
        grid: '1d',
        restart: false,
        runId: 'run-a',
      }),
    );
    const joined = await b.ledgerTransaction((conn) =>
      openBackfill(conn, {
        job: 'j',
        streams: ['accounts'],
        windows: WINDOWS,
        grid: '1d',
        restart: false,
        runId: 'run-b',
      }),
    );
    expect(joined).toMatchObject({ backfillId: backfill.backfillId, created: false });
    const got: Record<string, string[]> = { 'run-a': [], 'run-b': [] };
    for (;;) {
      const [fromA, fromB] = await Promise.all([claim(a, 'run-a', backfill), claim(b, 'run-b', backfill)]);
      for (const span of [...fromA, ...fromB]) {
        expect(span.length).toBeLessThanOrEqual(3);
        for (let i = 1; i < span.length; i++) expect(span[i]!.start > span[i - 1]!.start).toBe(true);
      }
      got['run-a']!.push(...fromA.flat().map((w) => w.start));
      got['run-b']!.push(...fromB.flat().map((w) => w.start));
      if (fromA.length === 0 && fromB.length === 0) break;
    }
    const all = [...got['run-a']!, ...got['run-b']!];
    expect(all.sort()).toEqual(WINDOWS.map((w) => w.start));
    expect(got['run-a']!.length).toBeGreaterThan(0);
    expect(got['run-b']!.length).toBeGreaterThan(0);
    const counts = await a.withConnection((conn) =>
      backfillWindowCounts(conn, {
        job: 'j',
        backfillId: backfill.backfillId,
        from: backfill.from,
        to: backfill.to,
        streams: ['accounts'],
      }),
    );
    expect(counts).toEqual({ total: 30, done: 0, failed: 0, open: 30, held: 30, heldByRun: 0 });
  });

  it('frees the windows of a dead run, and refuses the commit of a worker whose windows were taken over', async () => {
    const [a, b] = await warehouse();
    await worker(a, 'run-a', process.pid);
    await worker(b, 'run-b', process.pid);
    const backfill = await a.ledgerTransaction((conn) =>
      openBackfill(conn, {
        job: 'j',
        streams: ['accounts'],
        windows: WINDOWS.slice(0, 3),
        grid: '1d',
        restart: false,
        runId: 'run-a',
      }),
    );
    const [held] = await claim(a, 'run-a', backfill, 1);
    expect(held!.map((w) => w.start)).toEqual(['2024-01-01', '2024-01-02', '2024-01-03']);
    expect(await claim(b, 'run-b', backfill)).toEqual([]);

    // run-a stops renewing its lease
    await a.withConnection((conn) =>
      conn.run(`UPDATE _etl_runs SET expires_at = CURRENT_TIMESTAMP - INTERVAL '1 second' WHERE run_id = 'run-a'`),
    );
    const [taken] = await claim(b, 'run-b', backfill, 1);
    expect(taken).toEqual(held);

    const span = await a.openSpan({
      job: 'j',
      stream: 'accounts',
      runId: 'run-a',
      windows: [held![0]!],
      tables: accountsStream.tables,
    });
    await span.append('accounts', [{ seq: 1, windowStart: '2024-01-01', row: account('C1', 'Athens') }]);
    const ledger = {
      job: 'j',
      stream: 'accounts',
      runId: 'run-a',
      firstDay: '2024-01-01',
      claimedBy: 'run-a',
      backfillId: backfill.backfillId,
    };
    await expect(commitWindows(span, ledger, [held![0]!], new Map([['2024-01-01', 1]]), 1)).rejects.toThrow(
      ClaimLostError,
    );
    await a.withConnection(async (conn) => {
      expect(await conn.all('SELECT customer_id FROM accounts')).toEqual([]);
      expect(
        await conn.all(`SELECT claimed_by, status FROM _etl_windows WHERE window_start = CAST('2024-01-01' AS DATE)`),
      ).toEqual([{ claimed_by: 'run-b', status: 'pending' }]);
    });
  });
});
