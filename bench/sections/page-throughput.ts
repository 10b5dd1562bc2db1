import { cpus, loadavg } from 'node:os';
import pLimit from 'p-limit';
import { createApi } from '../../src/commands/job-session.js';
import { parseConfig } from '../../src/config/load-config.js';
import { silentLogger } from '../../src/log/logger.js';
import { planRange } from '../../src/plan/plan-windows.js';
import { streamDefinition } from '../../src/streams/registry.js';
import type { StreamContext } from '../../src/streams/stream.js';
import type { BenchCheck, BenchSection } from '../support/bench-section.js';
import { startBenchEmulator } from '../support/bench-emulator.js';
import { busiestSecond } from '../support/busiest-second.js';
import { unlessSmoke } from '../support/bench-mode.js';

/** Emulated latency of every answer. */
const LATENCY_MS = 100;
/** A month of accounts: ~1,300 export records a day. */
const DATA = {
  seed: 1,
  accounts: unlessSmoke(20_000, 500),
  startDate: '2024-01-01',
  endDate: unlessSmoke('2024-01-30', '2024-01-05'),
  timezone: 'UTC',
} as const;
/** Share of `concurrency × page size / latency` the fetch path must reach where latency, not the rate limit, bounds it. */
const TARGET_SHARE = 0.9;

interface Scenario {
  name: string;
  concurrency: number;
  requestsPerSecond: number;
  pageSize: number;
  windowDays: number;
}

const SCENARIOS: Scenario[] = [
  { name: 'latency-bound, 1-day windows', concurrency: 8, requestsPerSecond: 200, pageSize: 100, windowDays: 1 },
  { name: 'latency-bound, one 30-day window', concurrency: 8, requestsPerSecond: 200, pageSize: 100, windowDays: 30 },
  { name: 'rate-bound, 1-day windows', concurrency: 8, requestsPerSecond: 40, pageSize: 100, windowDays: 1 },
];

/**
 * Fetch-only page throughput: the accounts stream's extractor, through the real client (rate limiter,
 * concurrency cap, retries, paging with read-ahead), against the emulator in its own process answering
 * every request after `LATENCY_MS`. Windows run `concurrency` at a time, as `run` and `backfill` run them.
 */
export const pageThroughput: BenchSection = {
  name: 'page-throughput',
  title: `fetch-only throughput with ${LATENCY_MS} ms latency, as a share of concurrency × page size / latency (target ≥ ${TARGET_SHARE * 100}%), and requests per second against the rate limit`,
  async run() {
    const emulator = await startBenchEmulator({ ...DATA, port: 0 }, LATENCY_MS);
    const rows: Array<Record<string, string | number>> = [];
    const checks: BenchCheck[] = [];
    const data = [];
    try {
      for (const scenario of SCENARIOS) {
        await emulator.takeArrivals();
        const load = loadavg()[0]!;
        const measured = await fetchAll(emulator.url, scenario);
        const { arrivals, cpuMs: emulatorCpuMs } = await emulator.takeArrivals();
        const busiestSent = busiestSecond(measured.sent);
        const busiest = busiestSecond(arrivals);
        const latencyBound = (scenario.concurrency * 1000) / LATENCY_MS;
        const latencyBoundRecords = latencyBound * scenario.pageSize;
        const recordsPerSecond = measured.records / measured.seconds;
        const pagesPerSecond = measured.pages / measured.seconds;
        const bound = latencyBound <= scenario.requestsPerSecond ? 'latency' : 'rate limit';
        const share =
          bound === 'latency' ? recordsPerSecond / latencyBoundRecords : pagesPerSecond / scenario.requestsPerSecond;
        const meanRoundTrip = measured.roundTrips.reduce((a, b) => a + b, 0) / measured.roundTrips.length;
        // What `concurrency` requests always in flight would reach at the round trip the source really gave.
        const inFlightShare =
          bound === 'latency' ? pagesPerSecond / ((scenario.concurrency * 1000) / meanRoundTrip) : Number.NaN;
        rows.push({
          scenario: scenario.name,
          'limit req/s': scenario.requestsPerSecond,
          pages: measured.pages,
          seconds: round(measured.seconds, 2),
          'pages/s': round(pagesPerSecond, 1),
          'records/s': Math.round(recordsPerSecond),
          'c×size/latency': latencyBoundRecords,
          'share of bound': `${(share * 100).toFixed(1)}% of ${bound}`,
          'round trip ms': round(meanRoundTrip, 1),
          'kept in flight': Number.isNaN(inFlightShare) ? '-' : `${(inFlightShare * 100).toFixed(1)}%`,
          'max req/s sent': busiestSent,
          'max req/s arrived': busiest,
          load: round(load, 2),
        });
        if (bound === 'latency') {
          checks.push({
            name: `${scenario.name}: throughput`,
            passed: share >= TARGET_SHARE,
            detail: `${(share * 100).toFixed(1)}% of ${latencyBoundRecords} records/s (target ≥ ${TARGET_SHARE * 100}%)`,
          });
        }
        // The client answers for when its requests leave; when they arrive also depends on the machine.
        checks.push({
          name: `${scenario.name}: rate limit`,
          passed: busiestSent <= scenario.requestsPerSecond,
          detail: `at most ${busiestSent} requests sent in any one second (limit ${scenario.requestsPerSecond}); ${busiest} arrived`,
        });
        const { sent, roundTrips: _roundTrips, ...counts } = measured;
        data.push({
          scenario,
          ...counts,
          recordsPerSecond,
          pagesPerSecond,
          latencyBoundRecordsPerSecond: latencyBoundRecords,
          bound,
          share,
          meanRoundTripMs: meanRoundTrip,
          keptInFlightShare: inFlightShare,
          busiestSecondSent: busiestSent,
          busiestSecondArrived: busiest,
          requestsSent: sent.length,
          requestsArrived: arrivals.length,
          emulatorCpuMs,
          loadAverageBefore: load,
          loadAverageAfter: loadavg()[0],
        });
      }
    } finally {
      await emulator.close();
    }
    return {
      settings: { latencyMs: LATENCY_MS, dataset: DATA, targetShare: TARGET_SHARE, cpus: cpus().length },
      rows,
      checks,
      notes: [
        '"max req/s sent" counts every call the client made to fetch, watched from outside the client; "max req/s arrived" is what the emulator saw, which adds the machine\'s scheduling jitter on the way.',
        '"round trip" is the mean time from sending a request to having its whole body; "kept in flight" compares pages/s with concurrency ÷ that round trip (how full the client kept its slots). Where the machine is busy (load ≥ its CPUs), the emulator answers late and the round trip, not the client, sets the pace.',
      ],
      data,
    };
  },
};

async function fetchAll(
  url: string,
  scenario: Scenario,
): Promise<{
  records: number;
  pages: number;
  seconds: number;
  requests: number;
  clientCpuMs: number;
  sent: number[];
  roundTrips: number[];
}> {
  const config = parseConfig(
    `source:
  base_url: ${url}
  timezone: ${DATA.timezone}
  page_size: ${scenario.pageSize}
  concurrency: ${scenario.concurrency}
  requests_per_second: ${scenario.requestsPerSecond}
  retries: 0
  timeout_ms: 30000
jobs:
  bench:
    streams: [accounts]
    window_days: ${scenario.windowDays}
    first_day: ${DATA.startDate}
`,
    'bench',
    {},
  );
  const job = config.jobs.bench!;
  const api = createApi(config, silentLogger);
  const accounts = streamDefinition('accounts');
  const windows = planRange(job, DATA.startDate, DATA.endDate);
  const limit = pLimit(scenario.concurrency);
  let records = 0;
  let pages = 0;
  const sent: number[] = [];
  const roundTrips: number[] = [];
  const realFetch = globalThis.fetch;
  globalThis.fetch = async (input, init) => {
    const at = performance.now();
    sent.push(performance.timeOrigin + at);
    const response = await realFetch(input, init);
    const text = response.text.bind(response);
    Object.defineProperty(response, 'text', {
      value: async () => {
        const body = await text();
        roundTrips.push(performance.now() - at);
        return body;
      },
    });
    return response;
  };
  const cpu = process.cpuUsage();
  const started = performance.now();
  try {
    await Promise.all(
      windows.map((window) =>
        limit(async () => {
          const ctx: StreamContext = {
            api: api.scoped(),
            pageSize: scenario.pageSize,
            concurrency: scenario.concurrency,
            timezone: DATA.timezone,
            job: 'bench',
            jobConfig: job,
            logger: silentLogger,
          };
          for await (const batch of accounts.extract(ctx, [window])) {
            records += batch.records.length;
            pages++;
          }
        }),
      ),
    );
  } finally {
    globalThis.fetch = realFetch;
  }
  const seconds = (performance.now() - started) / 1000;
  const used = process.cpuUsage(cpu);
  return {
    records,
    pages,
    seconds,
    requests: api.http.requestCount,
    clientCpuMs: (used.user + used.system) / 1000,
    sent,
    roundTrips,
  };
}

function round(value: number, places: number): number {
  return Math.round(value * 10 ** places) / 10 ** places;
}
