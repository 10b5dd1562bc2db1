import { copyFileSync, existsSync, mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startEmulator } from '../../src/emulator/index.js';
import { openDestination } from '../../src/load/warehouses.js';
import { addDays } from '../../src/plan/days.js';
import { selectCustomers } from '../../src/state/customer-selection.js';
import type { BenchCheck, BenchSection } from '../support/bench-section.js';
import { runCli } from '../support/cli-process.js';
import { unlessSmoke } from '../support/bench-mode.js';
import { fillSyntheticWarehouse } from '../support/synthetic-warehouse.js';

/** `BENCH_SCALE=0.01 npm run bench -- nightly-cost`: a hundredth of the million customers (the smoke runs it tiny). */
const SCALE = unlessSmoke(Number(process.env.BENCH_SCALE ?? 1), 0.0002);
const CUSTOMERS = Math.max(200, Math.round(1_000_000 * SCALE));
const TIMEZONE = 'Europe/Athens';
const FIRST_DAY = '2022-04-01';
/**
 * The program's last day: the quiet night loads it; the first night loads the days before. Two years of a
 * program make about 2% of its customers active on a day (the emulator spreads each customer's activity over its
 * life).
 */
const LAST_DAY = '2024-03-31';
/** The large-program profile: postings on webhook events plus a sweep, the state streams' sweep a week. */
const STATE_SWEEP_DAYS = 7;
const POSTINGS_SWEEP_DAYS = 14;
const RATE = 20;
const ENDPOINTS = [
  '/business-data/accounts',
  '/business-data/surveys',
  '/accounts/loyalty/postings',
  '/accounts/vouchers/get',
  '/accounts',
] as const;
const LIMIT_MB = 300;
/** The DuckDB destination's `memory_limit` (`BENCH_DUCKDB_MEMORY_LIMIT=128MB` to try another); the default when unset. */
const DUCKDB_MEMORY_LIMIT = process.env.BENCH_DUCKDB_MEMORY_LIMIT;
/** What the staged rows of the spans in flight may take (`BENCH_DUCKDB_STAGING_MEMORY`); the default when unset. */
const DUCKDB_STAGING_MEMORY = process.env.BENCH_DUCKDB_STAGING_MEMORY;
const SELECTION_LIMIT_S = 60;
/** The selection is timed at a million customers whatever the scale, unless the smoke runs it tiny. */
const SELECTION_CUSTOMERS = SCALE >= 0.01 ? 1_000_000 : CUSTOMERS;
/**
 * A first night at a million takes an hour and more: `BENCH_NIGHTLY_KEEP=dir` keeps its warehouse there (as it was
 * when the first night ended), and `BENCH_NIGHTLY_FROM=dir` starts from a copy of such a warehouse (same
 * `BENCH_SCALE`) and runs the quiet night alone.
 */
const KEEP_DIR = process.env.BENCH_NIGHTLY_KEEP;
const FROM_DIR = process.env.BENCH_NIGHTLY_FROM;
const ALL_STREAMS = ['accounts', 'surveys', 'loyalty_postings', 'loyalty_status', 'vouchers'];
/**
 * The job's streams (`BENCH_NIGHTLY_STREAMS=accounts,loyalty_postings,loyalty_status,vouchers` leaves out the
 * surveys, whose first night at a million is tens of thousands of export pages that tell nothing of the
 * per-customer streams).
 */
const STREAMS = process.env.BENCH_NIGHTLY_STREAMS?.split(',').map((s) => s.trim()) ?? ALL_STREAMS;

/**
 * A night of a large program, measured: the emulator with a million customers (×`BENCH_SCALE`), a first night
 * (`first_night: sweep`) and a quiet night after it, with postings on `webhook` plus a sweep of
 * {@link POSTINGS_SWEEP_DAYS} nights and the state streams' sweep of a week, into DuckDB. The emulator answers
 * unpaced; the time at 20 requests/s is computed from the requests counted.
 */
export const nightlyCost: BenchSection = {
  name: 'nightly-cost',
  title: `requests, time at ${RATE}/s, selection time and peak RSS of a first and a quiet night of ${CUSTOMERS.toLocaleString('en')} customers (targets: quiet night ≤ 1.1 × the sweep's arithmetic, selection < ${SELECTION_LIMIT_S} s, peak RSS < ${LIMIT_MB} MB)`,
  async run() {
    const before = process.memoryUsage().rss;
    /** Customers whose postings were asked (page 1 requests) since the night began: pages beyond the first are requests too. */
    const askedPostings = new Set<string>();
    const emulator = await startEmulator({
      seed: 38,
      accounts: CUSTOMERS,
      startDate: FIRST_DAY,
      endDate: LAST_DAY,
      timezone: TIMEZONE,
      port: 0,
      clock: () => Date.parse(`${addDays(LAST_DAY, 1)}T06:00:00Z`),
      hooks: {
        middleware: [
          async (request, next) => {
            if (request.path === '/accounts/loyalty/postings' && request.query.get('pageNumber') === '1')
              askedPostings.add(request.query.get('phone') ?? request.query.get('email') ?? '');
            return next(request);
          },
        ],
      },
    });
    const emulatorMb = mb(process.memoryUsage().rss - before);
    const dir = mkdtempSync(join(tmpdir(), 'loyalty-bench-nightly-'));
    const path = join(dir, 'warehouse.duckdb');
    const file = join(dir, 'jobs.yaml');
    writeFileSync(file, jobsYaml(emulator.url, path));
    const rows: Array<Record<string, string | number>> = [];
    const checks: BenchCheck[] = [];
    const data: unknown[] = [];
    try {
      if (FROM_DIR) {
        if (!existsSync(join(FROM_DIR, 'warehouse.duckdb')))
          throw new Error(`BENCH_NIGHTLY_FROM: no warehouse.duckdb in ${FROM_DIR}`);
        copyWarehouse(FROM_DIR, dir);
      }
      let size = FROM_DIR ? statSync(path).size : 0;
      const nights = [
        ['first', addDays(LAST_DAY, -1)],
        ['quiet', LAST_DAY],
      ] as const;
      for (const [night, until] of FROM_DIR ? nights.slice(1) : nights) {
        emulator.stats.reset();
        askedPostings.clear();
        const run = await runCli(
          ['run', '--config', file, '--job', 'bench', '--until', until],
          { LOYALTY_LOG_LEVEL: 'warn' },
          [],
          6 * 3600_000,
        );
        if (run.code !== 0) throw new Error(`loyalty-etl run exited ${run.code}:\n${run.stderr.slice(-3000)}`);
        if (night === 'first' && KEEP_DIR) copyWarehouse(dir, KEEP_DIR);
        const requests = Object.fromEntries(ENDPOINTS.map((e) => [e, emulator.stats.requests(e)]));
        // `/accounts` is a prefix of the other per-customer paths: the state's own calls are what is left
        requests['/accounts'] =
          requests['/accounts']! - requests['/accounts/loyalty/postings']! - requests['/accounts/vouchers/get']!;
        const total = Object.values(requests).reduce((a, b) => a + b, 0);
        const grown = statSync(path).size - size;
        size += grown;
        const selection = await selectionSeconds(path, until);
        const active = night === 'quiet' ? activeCustomers(emulator, LAST_DAY) : null;
        rows.push({
          night,
          'accounts export': requests['/business-data/accounts']!,
          surveys: requests['/business-data/surveys']!,
          postings: requests['/accounts/loyalty/postings']!,
          'postings customers': askedPostings.size,
          'loyalty state': requests['/accounts']!,
          vouchers: requests['/accounts/vouchers/get']!,
          requests: total,
          [`hours at ${RATE}/s`]: Math.round((total / RATE / 3600) * 100) / 100,
          'run s (unpaced)': Math.round(run.seconds),
          'selection s': Math.round(selection * 10) / 10,
          'peak RSS MB': mb(run.peakRssBytes),
          'warehouse growth MB': mb(grown),
        });
        data.push({
          night,
          until,
          requests,
          total,
          seconds: run.seconds,
          selectionSeconds: selection,
          peakRssBytes: run.peakRssBytes,
          warehouseGrowthBytes: grown,
          active,
        });
        checks.push({
          name: `${night} night: peak RSS under ${LIMIT_MB} MB`,
          passed: run.peakRssBytes < LIMIT_MB * 2 ** 20,
          detail: `${mb(run.peakRssBytes)} MB`,
        });
        checks.push({
          name: `${night} night: the selection under ${SELECTION_LIMIT_S} s`,
          passed: selection < SELECTION_LIMIT_S,
          detail: `${selection.toFixed(1)} s (the three streams' selections of the night's span)`,
        });
        if (active !== null) {
          const bound = 1.1 * (3 * active + CUSTOMERS * (2 / STATE_SWEEP_DAYS + 1 / POSTINGS_SWEEP_DAYS));
          const perCustomer = total - requests['/business-data/accounts']! - requests['/business-data/surveys']!;
          checks.push({
            name: 'quiet night: per-customer requests within 1.1 × (3 × active + customers × (2 / sweep_days + 1 / postings.sweep_days))',
            passed: perCustomer <= bound,
            detail: `${perCustomer} against ${Math.round(bound)} (${active} customers active on ${LAST_DAY}: ${((active / CUSTOMERS) * 100).toFixed(1)}%)`,
          });
        }
      }
      // the selection at the full size, on a warehouse made up in SQL (the nights above take hours at a million)
      const million = await syntheticSelection(join(dir, 'synthetic.duckdb'));
      rows.push({
        night: `quiet, ${SELECTION_CUSTOMERS.toLocaleString('en')} customers made up in SQL`,
        'selection s': Math.round(million.seconds * 10) / 10,
      });
      data.push({ syntheticSelection: million });
      checks.push({
        name: `the selection of a night of ${SELECTION_CUSTOMERS.toLocaleString('en')} customers under ${SELECTION_LIMIT_S} s`,
        passed: million.seconds < SELECTION_LIMIT_S,
        detail: `${million.seconds.toFixed(1)} s for ${million.selected.join(' + ')} customers selected (postings, loyalty_status, vouchers)`,
      });
    } finally {
      await emulator.close();
      rmSync(dir, { recursive: true, force: true });
    }
    return {
      settings: {
        customers: CUSTOMERS,
        scale: SCALE,
        firstDay: FIRST_DAY,
        lastDay: LAST_DAY,
        stateSweepDays: STATE_SWEEP_DAYS,
        postingsSweepDays: POSTINGS_SWEEP_DAYS,
        rate: RATE,
      },
      rows,
      checks,
      notes: [
        `the emulator (in the bench's process) took ${emulatorMb} MB for ${CUSTOMERS.toLocaleString('en')} customers: it generates records from their index.`,
        `job: ${STREAMS.join(', ')}; postings (customers: webhook, sweep_days ${POSTINGS_SWEEP_DAYS}, first_night: sweep), loyalty_status and vouchers (sweep_days ${STATE_SWEEP_DAYS}), DuckDB; no webhook receiver runs, so postings are asked by the sweep alone (events would add at most one request per active customer).`,
        `time at ${RATE}/s is the requests counted divided by ${RATE}; the runs themselves are unpaced (requests_per_second 5000).`,
        ...(FROM_DIR ? [`the quiet night ran on a copy of the first night's warehouse kept in ${FROM_DIR}.`] : []),
        "selection s: the night's three selections (postings, loyalty_status, vouchers) read to their end against the warehouse after the night, as the run reads them.",
      ],
      data,
    };
  },
};

/** The warehouse of `from`, its write-ahead log and the analysts' copy published beside it, copied into `to`. */
function copyWarehouse(from: string, to: string): void {
  mkdirSync(to, { recursive: true });
  for (const file of ['warehouse.duckdb', 'warehouse.duckdb.wal', 'warehouse.published.duckdb'])
    if (existsSync(join(from, file))) copyFileSync(join(from, file), join(to, file));
}

function jobsYaml(url: string, path: string): string {
  return `source:
  base_url: ${url}
  timezone: ${TIMEZONE}
  history_start: ${FIRST_DAY}
  page_size: 500
  concurrency: 4
  requests_per_second: 5000
  retries: 2
  timeout_ms: 120000
destination:
  type: duckdb
  path: ${JSON.stringify(path)}${DUCKDB_MEMORY_LIMIT ? `\n  memory_limit: ${DUCKDB_MEMORY_LIMIT}` : ''}${DUCKDB_STAGING_MEMORY ? `\n  staging_memory: ${DUCKDB_STAGING_MEMORY}` : ''}
jobs:
  bench:
    streams: [${STREAMS.join(', ')}]
    window_days: 1
    lookback_days: 2
    first_day: ${FIRST_DAY}
    sweep_days: ${STATE_SWEEP_DAYS}
    first_night: sweep
    postings:
      customers: webhook
      sweep_days: ${POSTINGS_SWEEP_DAYS}
      max_span_days: 92
`;
}

/** Seconds the three selections of the night ending `until` take to read to their end. */
async function selectionSeconds(path: string, until: string): Promise<number> {
  return (await timedSelections(path, until)).seconds;
}

/**
 * A warehouse of {@link SELECTION_CUSTOMERS} customers made up in SQL, as a large program's would be after weeks of
 * nights: two postings a customer, every customer observed by each stream within its sweep, 2% of them with an
 * account change and a posting in the night's three windows; then the night's three selections, timed.
 */
export async function syntheticSelection(path: string): Promise<{ seconds: number; selected: number[] }> {
  const n = SELECTION_CUSTOMERS;
  await fillSyntheticWarehouse(path, { accounts: n, postings: 2 * n });
  const warehouse = await openDestination({ type: 'duckdb', path, schema: 'main' }, { create: false });
  try {
    await warehouse.withConnection(async (conn) => {
      const observed = (stream: string, days: number) =>
        `SELECT '${stream}', printf('C%09d', i), TIMESTAMPTZ '2024-12-31 06:00:00+00' - to_seconds(CAST((i * 7919) % (${days} * 86400) AS BIGINT)), 'answered', 'bench', TIMESTAMPTZ '2024-12-31 06:00:00+00' FROM range(${n}) r(i)`;
      await conn.run(
        `INSERT INTO _etl_customer_observations (stream, customer_id, observed_at, outcome, _run_id, _loaded_at)
         ${observed('loyalty_postings', POSTINGS_SWEEP_DAYS)} UNION ALL ${observed('loyalty_status', STATE_SWEEP_DAYS)} UNION ALL ${observed('vouchers', STATE_SWEEP_DAYS)}`,
      );
      await conn.run(
        `INSERT INTO _etl_account_windows (customer_id, _window_start, _run_id, _loaded_at)
         SELECT printf('C%09d', i), DATE '2024-12-29' + CAST(i % 3 AS INTEGER), 'bench', TIMESTAMPTZ '2024-12-31 06:00:00+00' FROM range(0, ${n}, 50) r(i)`,
      );
      await conn.run('CHECKPOINT');
    });
  } finally {
    await warehouse.close();
  }
  return timedSelections(path, '2024-12-31');
}

async function timedSelections(path: string, until: string): Promise<{ seconds: number; selected: number[] }> {
  const destination = await openDestination({ type: 'duckdb', path, schema: 'main' }, { create: false });
  try {
    const read = <T>(fn: Parameters<typeof destination.withConnection<T>>[0]) => destination.withConnection(fn);
    const span = [0, 1, 2].map((i) => ({ start: addDays(until, i - 2), end: addDays(until, i - 2) }));
    const started = performance.now();
    const selected: number[] = [];
    const rules = [
      [
        'loyalty_postings',
        {
          kind: 'webhook' as const,
          sweep: { sweepDays: POSTINGS_SWEEP_DAYS, firstNightSweep: true, firstDay: FIRST_DAY, lookbackDays: 2 },
        },
      ],
      ['loyalty_status', { kind: 'signs-and-sweep' as const, sweepDays: STATE_SWEEP_DAYS }],
      ['vouchers', { kind: 'signs-and-sweep' as const, sweepDays: STATE_SWEEP_DAYS }],
    ] as const;
    for (const [stream, rule] of rules) {
      const selection = await selectCustomers(
        read,
        'bench',
        stream,
        rule,
        span,
        new Date(`${addDays(until, 1)}T06:00:00Z`),
      );
      let count = 0;
      for await (const _ of selection.customers) count++;
      selected.push(count);
    }
    return { seconds: (performance.now() - started) / 1000, selected };
  } finally {
    await destination.close();
  }
}

/** Customers with an account change or a posting on `day`: the night's active customers. */
function activeCustomers(emulator: Awaited<ReturnType<typeof startEmulator>>, day: string): number {
  const active = new Set<string>();
  for (const a of emulator.truth.accounts(day, day)) active.add(a.customer_id);
  for (const p of emulator.truth.postings(day, day)) active.add(p.customer_id);
  return active.size;
}

function mb(bytes: number): number {
  return Math.round(bytes / 2 ** 20);
}
