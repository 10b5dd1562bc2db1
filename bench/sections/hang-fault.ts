import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BenchCheck, BenchSection } from '../support/bench-section.js';
import { startBenchEmulator } from '../support/bench-emulator.js';
import { type BenchJob, writeBenchJobs } from '../support/bench-jobs.js';
import { runCli } from '../support/cli-process.js';
import { unlessSmoke } from '../support/bench-mode.js';

const FROM = '2024-03-01';
const TO = unlessSmoke('2024-03-14', '2024-03-02');
const TIMEZONE = 'Europe/Athens';
const DATA = { seed: 53, accounts: unlessSmoke(1500, 40), startDate: FROM, endDate: TO, timezone: TIMEZONE } as const;
/** Share of the source's requests that are never answered (the emulator's `--hangs`). */
const HANG_RATE = Number(process.env.BENCH_HANG_RATE ?? unlessSmoke(0.03, 0.05));
/** `source.timeout_ms` of both runs: what one hung request costs its lane before it is asked again. */
const TIMEOUT_MS = unlessSmoke(3000, 500);
const LATENCY_MS = 30;

const mb = (bytes: number) => Math.round(bytes / 2 ** 20);

/**
 * A `run` into a fresh DuckDB warehouse against a source that never answers 3% of its requests, beside the same run
 * against a source that answers them all, at the pace of the shipped `jobs.yaml` (50 requests a second, 8 in
 * flight). A hung request holds its lane until `source.timeout_ms` and is asked again; the other lanes go on, so the
 * run should take at most the clean run's time and half more, plus one time-out. Both runs must load the same rows.
 */
export const hangFault: BenchSection = {
  name: 'hang-fault',
  title: `a run with ${HANG_RATE * 100}% of requests hanging until the ${TIMEOUT_MS} ms time-out, against a clean run (target: ≤ clean × 1.5 + one time-out)`,
  async run() {
    const dir = mkdtempSync(join(tmpdir(), 'loyalty-bench-hang-'));
    const rows: Array<Record<string, string | number>> = [];
    const checks: BenchCheck[] = [];
    const measured: Record<string, { seconds: number; code: number | null; summary: string }> = {};
    try {
      for (const [name, hangRate] of [
        ['clean', 0],
        ['hangs', HANG_RATE],
      ] as const) {
        const emulator = await startBenchEmulator({ ...DATA, port: 0, faults: { hangRate, seed: 5 } }, LATENCY_MS);
        try {
          const job: BenchJob = {
            url: emulator.url,
            timezone: TIMEZONE,
            firstDay: FROM,
            historyStart: FROM,
            streams: ['accounts', 'surveys', 'loyalty_postings', 'loyalty_status'],
            pageSize: 50,
            concurrency: 8,
            requestsPerSecond: 50,
            windowDays: 1,
            postingsSpanDays: 31,
            timeoutMs: TIMEOUT_MS,
            retries: 5,
          };
          const path = join(mkdtempSync(join(dir, `${name}-`)), 'warehouse.duckdb');
          const { file } = writeBenchJobs(job, { type: 'duckdb', path, schema: 'main', publish_path: false }, dir);
          const run = await runCli(['run', '--config', file, '--until', TO]);
          const retries = (run.stderr.match(/retrying source request/g) ?? []).length;
          measured[name] = { seconds: run.seconds, code: run.code, summary: run.stdout.trim() };
          rows.push({
            run: name,
            seconds: Number(run.seconds.toFixed(1)),
            'retried (time-outs)': retries,
            'peak RSS MB': mb(run.peakRssBytes),
            'exit code': run.code ?? `signal ${run.signal}`,
          });
          process.stderr.write(`${name}: ${run.seconds.toFixed(1)} s, exit ${run.code}\n`);
        } finally {
          await emulator.close();
        }
      }
      const clean = measured.clean!;
      const hangs = measured.hangs!;
      const allowed = clean.seconds * 1.5 + TIMEOUT_MS / 1000;
      checks.push({
        name: 'both runs load everything',
        passed: clean.code === 0 && hangs.code === 0,
        detail: `exit codes ${clean.code} and ${hangs.code}`,
      });
      checks.push({
        name: 'hung requests cost a lane, not the run',
        passed: hangs.seconds <= allowed,
        detail: `${hangs.seconds.toFixed(1)} s with hangs against ${clean.seconds.toFixed(1)} s clean (allowed ${allowed.toFixed(1)} s)`,
      });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    return {
      settings: { dataset: DATA, hangRate: HANG_RATE, timeoutMs: TIMEOUT_MS, latencyMs: LATENCY_MS, to: TO },
      rows,
      checks,
      notes: [
        'retried (time-outs): "retrying source request" lines of the run with hangs, one per hung request asked again.',
      ],
    };
  },
};
