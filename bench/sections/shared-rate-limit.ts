import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BenchCheck, BenchSection } from '../support/bench-section.js';
import { startBenchEmulator } from '../support/bench-emulator.js';
import { type BenchJob, writeBenchJobs } from '../support/bench-jobs.js';
import { startBenchPostgres } from '../support/bench-postgres.js';
import { busiestSecond, closestSpan } from '../support/busiest-second.js';
import { runCli } from '../support/cli-process.js';
import { unlessSmoke } from '../support/bench-mode.js';

/** `BENCH_ROUNDS=20 npm run bench -- shared-rate-limit`: more rounds, for a rarer excess. */
const ROUNDS = unlessSmoke(Number(process.env.BENCH_ROUNDS ?? 5), 1);
const WORKERS = 3;
const LIMIT = 20;
const LATENCY_MS = 10;
const FROM = '2024-01-01';
const TO = unlessSmoke('2024-02-19', '2024-01-05');
const TIMEZONE = 'Europe/Athens';
/** A small program: the workers spend their time at the rate limit, on pages of 5 records. */
const DATA = { seed: 43, accounts: 100, startDate: FROM, endDate: TO, timezone: TIMEZONE } as const;

/**
 * Three `loyalty-etl backfill` processes share one backfill on one PostgreSQL warehouse and one
 * `requests_per_second`, as `test/e2e/shared-rate-limit.test.ts` runs them, round after round on a fresh database:
 * the busiest second of arrivals at the emulator (its own process, answering `LATENCY_MS` after each arrival), and
 * how close the nearest `LIMIT + 1` arrivals came (above 1000 ms: the limit held).
 */
export const sharedRateLimit: BenchSection = {
  name: 'shared-rate-limit',
  title: `${WORKERS} backfill workers sharing requests_per_second ${LIMIT} on PostgreSQL: the busiest second at the source in ${ROUNDS} rounds (target ≤ ${LIMIT})`,
  async run() {
    const emulator = await startBenchEmulator({ ...DATA, port: 0 }, LATENCY_MS);
    const postgres = await startBenchPostgres();
    const dir = mkdtempSync(join(tmpdir(), 'loyalty-bench-rate-'));
    const rows: Array<Record<string, string | number>> = [];
    const checks: BenchCheck[] = [];
    try {
      const job: BenchJob = {
        url: emulator.url,
        timezone: TIMEZONE,
        firstDay: FROM,
        historyStart: FROM,
        streams: ['accounts', 'surveys'],
        pageSize: 5,
        concurrency: 4,
        requestsPerSecond: LIMIT,
        windowDays: 1,
        postingsSpanDays: 1,
      };
      for (let round = 1; round <= ROUNDS; round++) {
        const { file } = writeBenchJobs(
          job,
          { type: 'postgres', url: await postgres.freshDatabase(), schema: 'public' },
          dir,
        );
        const load = loadavg()[0]!;
        await emulator.takeArrivals();
        const args = ['backfill', '--config', file, '--from', FROM, '--to', TO, '--concurrency', '4'];
        const runs = await Promise.all(Array.from({ length: WORKERS }, () => runCli(args)));
        const { arrivals } = await emulator.takeArrivals();
        const busiest = busiestSecond(arrivals);
        rows.push({
          round,
          requests: arrivals.length,
          'busiest second': busiest,
          [`closest ${LIMIT + 1} ms`]: Math.round(closestSpan(arrivals, LIMIT + 1)),
          'worker seconds': runs.map((r) => r.seconds.toFixed(1)).join(' '),
          'exit codes': runs.map((r) => r.code).join(' '),
          load: Number(load.toFixed(2)),
        });
        checks.push({
          name: `round ${round}`,
          passed: busiest <= LIMIT && runs.every((r) => r.code === 0),
          detail: `${busiest} requests arrived in the busiest second (limit ${LIMIT}); workers exited ${runs.map((r) => r.code).join(', ')}`,
        });
        process.stderr.write(`${new Date().toISOString().slice(11, 19)} round ${round}: busiest second ${busiest}\n`);
      }
    } finally {
      await emulator.close();
      await postgres.stop();
      rmSync(dir, { recursive: true, force: true });
    }
    return {
      settings: {
        workers: WORKERS,
        requestsPerSecond: LIMIT,
        latencyMs: LATENCY_MS,
        dataset: DATA,
        from: FROM,
        to: TO,
        rounds: ROUNDS,
        cpus: cpus().length,
      },
      rows,
      checks,
      notes: [
        `"closest ${LIMIT + 1}": the shortest time ${LIMIT + 1} consecutive arrivals spanned; the limiter keeps ${LIMIT + 1} starts at least 1050 ms apart, so what is missing from 1050 is delay on the way (the machine's scheduling).`,
      ],
    };
  },
};
