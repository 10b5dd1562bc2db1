import { describe, expect, it } from 'vitest';
import { runCommand } from '../../src/commands/run.js';
import type { Emulator, FaultOptions } from '../../src/emulator/index.js';
import type { SqlConnection } from '../../src/load/warehouse/sql-connection.js';
import { emulatorJobs, runCli } from '../helpers/cli.js';
import { testDestinations } from '../helpers/destinations.js';
import {
  readAccounts,
  readPostings,
  readSurveyResponses,
  sortedByJson,
  withWarehouse,
} from '../helpers/warehouse-reader.js';
import { useEmulator } from '../helpers/suite-emulator.js';

const TZ = 'Europe/Athens';
const STREAMS = ['accounts', 'surveys', 'loyalty_postings'];
const POSTINGS = '    postings:\n      customers: all\n      max_span_days: 31\n';

/** Retry waits kept small, so that a month under faults loads in seconds. */
const QUICK_RETRIES = { timeout_ms: 300, retries: 8, backoff_base_ms: 5, backoff_max_ms: 50 };

/** The faults of issue 4's first "must show". */
const REAL_WORLD: FaultOptions = {
  serverErrorRate: 0.1,
  tooManyRequestsRate: 0.05,
  retryAfterSeconds: 0,
  hangRate: 0.02,
  cutBodyRate: 0.01,
  driftRate: 0.3,
};

/** Every stream of the warehouse, in the shape of the emulator's ground truth. */
async function warehouseContent(conn: SqlConnection) {
  return {
    accounts: await readAccounts(conn),
    responses: sortedByJson(await readSurveyResponses(conn)),
    postings: sortedByJson(await readPostings(conn)),
  };
}

function truthContent(emulator: Emulator, start: string, end: string) {
  return {
    accounts: new Map([...emulator.truth.accounts(start, end)].map((a) => [a.customer_id, { ...a }])),
    responses: sortedByJson([...emulator.truth.surveyResponses(start, end)].map((r) => ({ ...r }))),
    postings: sortedByJson([...emulator.truth.postings(start, end)].map((p) => ({ ...p }))),
  };
}

describe.each(testDestinations)('a month under faults into $name', (target) => {
  const MONTH = { startDate: '2024-05-01', endDate: '2024-05-31' } as const;
  const emulator = useEmulator({ seed: 31, accounts: 140, ...MONTH, timezone: TZ, port: 0 });

  it('with 10% 5xx, 5% 429, 2% hangs, 1% cut-off bodies and drift while paging, reaches the exact ground truth of every stream', async () => {
    const { config } = await target.fresh();
    const file = emulatorJobs({
      url: emulator.url,
      timezone: TZ,
      firstDay: MONTH.startDate,
      destination: config,
      streams: STREAMS,
      postings: POSTINGS,
      pageSize: 7,
      sourceKeys: QUICK_RETRIES,
    });
    emulator.faults.set(REAL_WORLD);
    await runCommand({ config: file, until: MONTH.endDate });

    const met = emulator.faults.counts();
    expect(met.serverErrors).toBeGreaterThan(0);
    expect(met.tooManyRequests).toBeGreaterThan(0);
    expect(met.hangs).toBeGreaterThan(0);
    expect(met.cutBodies).toBeGreaterThan(0);
    expect(met.driftedReads).toBeGreaterThan(0);

    await withWarehouse(config, async (conn) => {
      const loaded = await warehouseContent(conn);
      const truth = truthContent(emulator, MONTH.startDate, MONTH.endDate);
      expect(loaded.accounts.size).toBe(truth.accounts.size);
      expect(loaded.accounts).toEqual(truth.accounts);
      expect(loaded.responses.length).toBe(truth.responses.length);
      expect(loaded.responses).toEqual(truth.responses);
      expect(loaded.postings.length).toBe(truth.postings.length);
      expect(loaded.postings).toEqual(truth.postings);
      const marks = await conn.all<{ stream: string; d: string }>(
        `SELECT stream, CAST(complete_through AS VARCHAR) AS d FROM _etl_watermarks ORDER BY stream`,
      );
      expect(marks).toEqual(STREAMS.sort().map((stream) => ({ stream, d: MONTH.endDate })));
      expect(await conn.all(`SELECT * FROM _etl_windows WHERE status <> 'done'`)).toEqual([]);
    });
  });
});

describe.each(testDestinations)('a source that goes down and stays down, into $name', (target) => {
  const RANGE = { startDate: '2024-06-01', endDate: '2024-06-10' } as const;
  const emulator = useEmulator({ seed: 3, accounts: 60, ...RANGE, timezone: TZ, port: 0 });

  it('exits non-zero with one clear line, loads no part of a failed window, keeps the windows done, and the next run completes from the watermark', async () => {
    const { config } = await target.fresh();
    const file = emulatorJobs({
      url: emulator.url,
      timezone: TZ,
      firstDay: RANGE.startDate,
      destination: config,
      streams: STREAMS,
      postings: POSTINGS,
      pageSize: 5,
      sourceKeys: { retries: 2, backoff_base_ms: 5, backoff_max_ms: 20, concurrency: 2 },
    });
    emulator.faults.set({ downAfter: 20 });
    const down = await runCli(['run', '--config', file, '--until', RANGE.endDate]);
    expect(down.code).toBe(1);
    const lines = down.stderr.trimEnd().split('\n');
    expect(lines.filter((l) => l.startsWith('loyalty-etl: '))).toHaveLength(1);
    expect(lines.at(-1)).toMatch(
      /^loyalty-etl: \d+ window\(s\) failed; first: \w+ 2024-06-\d\d(\.\.2024-06-\d\d)?: .*HTTP 503.*gave up after 3 attempts/,
    );
    expect(emulator.faults.counts().down).toBeGreaterThan(0);

    const firstRun = await withWarehouse(config, async (conn) => {
      const windows = await conn.all<{ stream: string; w: string; status: string; run_id: string }>(
        `SELECT stream, CAST(window_start AS VARCHAR) AS w, status, run_id FROM _etl_windows ORDER BY stream, window_start`,
      );
      const failed = windows.filter((w) => w.status === 'failed');
      expect(failed.length).toBeGreaterThan(0);
      expect(windows.some((w) => w.stream === 'accounts' && w.status === 'done')).toBe(true); // done before the outage, and kept
      for (const { stream, w } of failed) expect(await rowsOfWindow(conn, stream, w), `${stream} ${w}`).toBe(0);
      const [run] = await conn.all<{ status: string; error: string }>(`SELECT status, error FROM _etl_runs`);
      expect(run!.status).toBe('failed');
      expect(run!.error).toMatch(/window\(s\) failed; first: /);
      // the watermark stands where the done windows end without a gap
      for (const stream of STREAMS) {
        const firstFailed = failed
          .filter((f) => f.stream === stream)
          .map((f) => f.w)
          .sort()[0];
        const [mark] = await conn.all<{ d: string }>(
          `SELECT CAST(complete_through AS VARCHAR) AS d FROM _etl_watermarks WHERE stream = $1`,
          [stream],
        );
        if (firstFailed) expect(mark === undefined || mark.d < firstFailed, stream).toBe(true);
      }
      return windows;
    });

    emulator.faults.set({});
    const again = await runCli(['run', '--config', file, '--until', RANGE.endDate]);
    expect(again.code, again.stderr.slice(-800)).toBe(0);
    expect(again.stderr).not.toMatch(/^loyalty-etl: /m);
    await withWarehouse(config, async (conn) => {
      expect(await warehouseContent(conn)).toEqual(truthContent(emulator, RANGE.startDate, RANGE.endDate));
      const windows = await conn.all<{ stream: string; w: string; status: string; run_id: string }>(
        `SELECT stream, CAST(window_start AS VARCHAR) AS w, status, run_id FROM _etl_windows ORDER BY stream, window_start`,
      );
      expect(windows.every((w) => w.status === 'done')).toBe(true);
      // accounts windows of the first run up to the watermark were not read again
      const kept = firstRun.filter((w) => w.stream === 'accounts' && w.status === 'done' && w.w === RANGE.startDate);
      for (const w of kept) expect(windows.find((x) => x.stream === w.stream && x.w === w.w)!.run_id).toBe(w.run_id);
    });
  });
});

/** Rows anywhere in the warehouse that came from one window of a stream (target tables and rejects). */
async function rowsOfWindow(conn: SqlConnection, stream: string, windowStart: string): Promise<number> {
  const tables: Record<string, string[]> = {
    accounts: ['accounts', 'account_custom_fields', '_etl_account_windows'],
    surveys: ['survey_responses', 'survey_answers'],
    loyalty_postings: ['loyalty_postings'],
  };
  let total = 0;
  for (const table of tables[stream]!) {
    const [row] = await conn.all<{ n: number | string }>(
      `SELECT COUNT(*) AS n FROM ${table} WHERE _window_start = CAST($1 AS DATE)`,
      [windowStart],
    );
    total += Number(row!.n);
  }
  const [rejects] = await conn.all<{ n: number | string }>(
    `SELECT COUNT(*) AS n FROM _etl_rejects WHERE stream = $1 AND window_start = CAST($2 AS DATE)`,
    [stream, windowStart],
  );
  return total + Number(rejects!.n);
}

describe('the auth secret under faults', () => {
  const TOKEN = 'tok"en\\wi/th+q=SECRET-7f3a';
  const RANGE = { startDate: '2024-07-01', endDate: '2024-07-06' } as const;
  const emulator = useEmulator({
    seed: 9,
    accounts: 60,
    ...RANGE,
    timezone: TZ,
    port: 0,
    auth: { header: 'X-Api-Key', value: `Key ${TOKEN}` },
    faults: {
      serverErrorRate: 0.1,
      tooManyRequestsRate: 0.05,
      retryAfterSeconds: 0,
      hangRate: 0.02,
      cutBodyRate: 0.05,
      driftRate: 0.5,
    },
    hooks: {
      // A careless source that quotes the credential back in an error: one window fails on it.
      middleware: [
        async (request, next) =>
          request.path === '/business-data/surveys' && request.query.get('start') === '2024-07-04'
            ? {
                status: 400,
                headers: { 'content-type': 'application/json' },
                body: JSON.stringify({
                  code: 1006,
                  message: `The following fields are invalid: X-Api-Key ${String(request.headers['x-api-key'])}`,
                }),
              }
            : next(request),
      ],
    },
  });

  it('never appears in stdout, stderr (logs, errors, stack traces), _etl_runs, _etl_windows or _etl_rejects', async () => {
    const target = testDestinations[0]!;
    const { config } = await target.fresh();
    const file = emulatorJobs({
      url: emulator.url,
      timezone: TZ,
      firstDay: RANGE.startDate,
      destination: config,
      streams: STREAMS,
      postings: POSTINGS,
      pageSize: 5,
      sourceKeys: { ...QUICK_RETRIES, retries: 10 },
      extraSource: '  auth:\n    header: X-Api-Key\n    prefix: "Key "\n    token: ${LOYALTY_API_TOKEN}\n',
    });
    const env = { LOYALTY_API_TOKEN: TOKEN, LOYALTY_LOG_LEVEL: 'debug' };
    const run = await runCli(['run', '--config', file, '--until', RANGE.endDate], env);
    const status = await runCli(['status', '--config', file], env);
    const check = await runCli(['check', '--config', file], env);
    expect(run.code).toBe(1); // the window whose error quoted the secret
    // it, and the windows after it in its span of surveys, which were not read
    expect(run.stderr).toMatch(/loyalty-etl: 3 window\(s\) failed; first: surveys 2024-07-04: .*\[REDACTED\]/);
    expect(run.stderr).toMatch(/"stack":/); // the failure was logged with its stack
    expect(run.stderr).toMatch(/retrying source request/);
    expect(check.code, check.stderr).toBe(0);
    const tables = await withWarehouse(config, async (conn) => ({
      runs: await conn.all(`SELECT * FROM _etl_runs`),
      windows: await conn.all(`SELECT * FROM _etl_windows`),
      rejects: await conn.all(`SELECT * FROM _etl_rejects`),
    }));
    expect(tables.windows.length).toBeGreaterThan(0);
    const everything = [
      run.stdout,
      run.stderr,
      status.stdout,
      status.stderr,
      check.stdout,
      check.stderr,
      JSON.stringify(tables, (_, v) => (typeof v === 'bigint' ? String(v) : v)),
    ].join('\n');
    for (const form of [TOKEN, JSON.stringify(TOKEN).slice(1, -1), encodeURIComponent(TOKEN), 'SECRET-7f3a'])
      expect(everything).not.toContain(form);
  });
});
