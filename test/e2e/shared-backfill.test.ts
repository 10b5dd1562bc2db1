import { describe, expect, it } from 'vitest';
import { daysBetween } from '../../src/plan/days.js';
import { emulatorJobs, startCli } from '../helpers/cli.js';
import { postgresTestDestination } from '../helpers/destinations.js';
import { RequestGate, waitForOutput } from '../helpers/request-gate.js';
import { RequestLog } from '../helpers/request-log.js';
import {
  readAccounts,
  readPostings,
  readSurveyResponses,
  sortedByJson,
  withWarehouse,
} from '../helpers/warehouse-reader.js';
import { useEmulator } from '../helpers/suite-emulator.js';

const TZ = 'Europe/Athens';
const FROM = '2024-01-01';
const TO = '2024-04-29'; // 120 daily windows per stream

describe('three workers on one PostgreSQL share a backfill', () => {
  const log = new RequestLog();
  const gate = new RequestGate();
  const emulator = useEmulator({
    seed: 41,
    accounts: 60,
    startDate: FROM,
    endDate: TO,
    timezone: TZ,
    port: 0,
    // A worker that finds others alive waits 2.5 s before its first request (the rate share): answered at once, the
    // first worker would finish the whole backfill in that time. At 50 ms an answer it needs about ten seconds
    // alone (at 25 ms, on a busy machine, a joining worker once found every window taken).
    faults: { latencyMs: 50 },
    hooks: { middleware: [gate.middleware, log.middleware] },
  });

  it('does every window exactly once, between them, and ends at the ground truth', async () => {
    const { config } = await postgresTestDestination.fresh();
    const file = emulatorJobs({
      url: emulator.url,
      timezone: TZ,
      firstDay: FROM,
      destination: config,
      streams: ['accounts', 'surveys', 'loyalty_postings'],
      pageSize: 500,
      postings: '    postings:\n      customers: all\n      max_span_days: 10\n',
    });
    const args = ['backfill', '--config', file, '--from', FROM, '--to', TO, '--concurrency', '2'];
    // the listings wait until all three have joined: a worker that starts late would find the work done
    gate.close();
    const workers = [startCli(args), startCli(args), startCli(args)];
    try {
      await Promise.all(workers.map((w) => waitForOutput(w, /backfill (started|joined)/)));
    } finally {
      gate.openUp();
    }
    const results = await Promise.all(workers.map((w) => w.done));
    for (const r of results) expect(r.code, r.stderr.slice(-800)).toBe(0);
    expect(results.filter((r) => /\(started\)/.test(r.stdout))).toHaveLength(1);
    expect(results.filter((r) => /\(joined\)/.test(r.stdout))).toHaveLength(2);

    // every window of the export streams was asked for exactly once, by one of the workers
    const windows = daysBetween(FROM, TO) + 1;
    for (const path of ['/business-data/accounts', '/business-data/surveys']) {
      const perWindow = log.perWindow(path);
      expect(perWindow.size, path).toBe(windows);
      expect(
        [...perWindow.values()].every((n) => n === 1),
        path,
      ).toBe(true);
    }

    await withWarehouse(config, async (conn) => {
      const rows = await conn.all<{ stream: string; run_id: string; requests: number | string }>(
        `SELECT stream, run_id, requests FROM _etl_windows WHERE status = 'done' AND claimed_by IS NULL AND error IS NULL`,
      );
      expect(rows).toHaveLength(3 * windows);
      const runs = await conn.all<{ run_id: string; status: string }>(`SELECT run_id, status FROM _etl_runs`);
      expect(runs.map((r) => r.status)).toEqual(['succeeded', 'succeeded', 'succeeded']);
      // the work was shared: each worker loaded windows
      expect(new Set(rows.map((r) => r.run_id))).toEqual(new Set(runs.map((r) => r.run_id)));
      // postings spans ask each customer once; a span loaded twice would leave requests not recorded in the ledger
      const postingsRequests = rows
        .filter((r) => r.stream === 'loyalty_postings')
        .reduce((n, r) => n + Number(r.requests), 0);
      expect(postingsRequests).toBe(log.count('/accounts/loyalty/postings'));

      expect(await readAccounts(conn)).toEqual(
        new Map([...emulator.truth.accounts(FROM, TO)].map((a) => [a.customer_id, { ...a }])),
      );
      expect(sortedByJson(await readSurveyResponses(conn))).toEqual(
        sortedByJson([...emulator.truth.surveyResponses(FROM, TO)].map((r) => ({ ...r }))),
      );
      expect(sortedByJson(await readPostings(conn))).toEqual(
        sortedByJson([...emulator.truth.postings(FROM, TO)].map((p) => ({ ...p }))),
      );
      const marks = await conn.all<{ stream: string; d: string }>(
        `SELECT stream, CAST(complete_through AS VARCHAR) AS d FROM _etl_watermarks ORDER BY stream`,
      );
      expect(marks).toEqual(['accounts', 'loyalty_postings', 'surveys'].map((stream) => ({ stream, d: TO })));
      expect(await conn.all(`SELECT status FROM _etl_backfills`)).toEqual([{ status: 'done' }]);
    });
  });
});
