import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { DestinationSettings } from '../../src/plan/job-plan.js';
import { DEFAULT_MEMORY_LIMIT, DEFAULT_STAGING_MEMORY } from '../../src/load/duckdb/duckdb-destination.js';
import { addDays } from '../../src/plan/days.js';
import type { BenchCheck, BenchSection } from '../support/bench-section.js';
import { startBenchEmulator } from '../support/bench-emulator.js';
import { type BenchJob, writeBenchJobs } from '../support/bench-jobs.js';
import { startBenchPostgres } from '../support/bench-postgres.js';
import { runCli } from '../support/cli-process.js';
import { unlessSmoke } from '../support/bench-mode.js';

const FIRST_DAY = '2024-01-01';
const SMALL_DAYS = unlessSmoke(30, 3);
const LARGE_DAYS = SMALL_DAYS * 10;
/** A year of a source with 20,000 customers: ~110 account records, ~50 survey answers and ~950 postings a day. */
const DATASET = {
  seed: 3,
  accounts: unlessSmoke(20_000, 300),
  startDate: FIRST_DAY,
  endDate: '2024-12-31',
  timezone: 'Europe/Athens',
} as const;
/**
 * Every stream, as the shipped jobs.yaml runs them: the nightly grid (1-day windows), accounts spans of up to 31
 * days and postings spans of 31 days (`postings.max_span_days`), so a span is the same size whatever the range;
 * no rate limit in the way.
 */
const JOB: Omit<BenchJob, 'url'> = {
  timezone: DATASET.timezone,
  firstDay: FIRST_DAY,
  streams: ['accounts', 'surveys', 'loyalty_postings'],
  pageSize: 500,
  concurrency: 4,
  requestsPerSecond: 5000,
  windowDays: 1,
  postingsSpanDays: 31,
};
const LIMIT_MB = 300;
/** `BENCH_DESTINATIONS=duckdb npm run bench -- memory`: one destination only. */
const DESTINATIONS = (['duckdb', 'postgres'] as const).filter((d) =>
  (process.env.BENCH_DESTINATIONS ?? 'duckdb,postgres').split(',').includes(d),
);
/** The DuckDB destination's `memory_limit` (`BENCH_DUCKDB_MEMORY_LIMIT` to try another). */
const DUCKDB_MEMORY_LIMIT = process.env.BENCH_DUCKDB_MEMORY_LIMIT ?? DEFAULT_MEMORY_LIMIT;
/** What the staged rows of the spans in flight may take (`BENCH_DUCKDB_STAGING_MEMORY` to try another). */
const DUCKDB_STAGING_MEMORY = process.env.BENCH_DUCKDB_STAGING_MEMORY ?? DEFAULT_STAGING_MEMORY;
const SAME_WITHIN = 0.2;

/**
 * Peak resident memory (VmHWM) of `loyalty-etl backfill` as a process of its own, for a range and a range ten
 * times longer, into each destination: memory must be bounded by the work in flight, not by the range.
 */
export const memory: BenchSection = {
  name: 'memory',
  title: `peak RSS of \`loyalty-etl backfill\` over ${SMALL_DAYS} and ${LARGE_DAYS} days (targets < ${LIMIT_MB} MB, the two within ±${SAME_WITHIN * 100}%)`,
  async run() {
    const emulator = await startBenchEmulator({ ...DATASET, port: 0 });
    const postgres = await startBenchPostgres();
    const dir = mkdtempSync(join(tmpdir(), 'loyalty-bench-memory-'));
    const rows: Array<Record<string, string | number>> = [];
    const checks: BenchCheck[] = [];
    const data = [];
    try {
      for (const name of DESTINATIONS) {
        const peaks: number[] = [];
        for (const days of [SMALL_DAYS, LARGE_DAYS]) {
          const destination: DestinationSettings =
            name === 'duckdb'
              ? {
                  type: 'duckdb',
                  path: join(dir, `${days}.duckdb`),
                  schema: 'main',
                  memory_limit: DUCKDB_MEMORY_LIMIT,
                  staging_memory: DUCKDB_STAGING_MEMORY,
                }
              : { type: 'postgres', url: await postgres.freshDatabase(), schema: 'public' };
          const { file } = writeBenchJobs({ ...JOB, url: emulator.url }, destination, dir);
          const to = addDays(FIRST_DAY, days - 1);
          const run = await runCli(['backfill', '--config', file, '--job', 'bench', '--from', FIRST_DAY, '--to', to], {
            LOYALTY_LOG_LEVEL: 'warn',
          });
          if (run.code !== 0) throw new Error(`loyalty-etl backfill exited ${run.code}:\n${run.stderr.slice(-3000)}`);
          // one line a stream: "accounts: 30 windows read, 3,393 account versions read, …"
          const records = [...run.stdout.matchAll(/windows? read, ([\d,]+) [^,]+ read,/g)].reduce(
            (n, m) => n + Number(m[1]!.replaceAll(',', '')),
            0,
          );
          peaks.push(run.peakRssBytes);
          rows.push({
            destination: name,
            range: `${FIRST_DAY}..${to}`,
            days,
            records,
            seconds: Math.round(run.seconds * 10) / 10,
            'peak RSS MB': mb(run.peakRssBytes),
          });
          data.push({
            destination: name,
            from: FIRST_DAY,
            to,
            days,
            records,
            seconds: run.seconds,
            peakRssBytes: run.peakRssBytes,
            summary: run.stdout.trim(),
          });
          process.stderr.write(
            `${new Date().toISOString().slice(11, 19)}   ${name} ${days} days: ${records} records, peak RSS ${mb(run.peakRssBytes)} MB\n`,
          );
        }
        const [small, large] = peaks as [number, number];
        checks.push({
          name: `${name}: peak RSS under ${LIMIT_MB} MB`,
          passed: Math.max(small, large) < LIMIT_MB * 2 ** 20,
          detail: `${mb(small)} MB and ${mb(large)} MB`,
        });
        const change = large / small - 1;
        checks.push({
          name: `${name}: same for ${LARGE_DAYS / SMALL_DAYS}× the range`,
          passed: Math.abs(change) <= SAME_WITHIN,
          detail: `${change >= 0 ? '+' : ''}${(change * 100).toFixed(1)}% (target within ±${SAME_WITHIN * 100}%)`,
        });
      }
    } finally {
      await emulator.close();
      await postgres.stop();
      rmSync(dir, { recursive: true, force: true });
    }
    return {
      settings: {
        dataset: DATASET,
        job: JOB,
        duckdbMemoryLimit: DUCKDB_MEMORY_LIMIT,
        duckdbStagingMemory: DUCKDB_STAGING_MEMORY,
        smallDays: SMALL_DAYS,
        largeDays: LARGE_DAYS,
        limitMb: LIMIT_MB,
        sameWithin: SAME_WITHIN,
      },
      rows,
      checks,
      notes: [
        'VmHWM of the `loyalty-etl backfill` process (compiled, as installed), read from /proc as it exits; the emulator and PostgreSQL run in processes of their own.',
        `job: every stream, 1-day windows, accounts and postings spans of up to 31 days (as shipped), concurrency ${JOB.concurrency}, page size ${JOB.pageSize}.`,
      ],
      data,
    };
  },
};

function mb(bytes: number): number {
  return Math.round(bytes / 2 ** 20);
}
