import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import type { DestinationSettings, StreamName } from '../../src/plan/job-plan.js';
import type { EmulatorOptions } from '../../src/emulator/index.js';
import { openDestination } from '../../src/load/warehouses.js';
import { streamDefinition } from '../../src/streams/registry.js';
import type { BenchCheck, BenchSection } from '../support/bench-section.js';
import { startBenchEmulator } from '../support/bench-emulator.js';
import { type BenchJob, writeBenchJobs } from '../support/bench-jobs.js';
import { type BenchPostgres, startBenchPostgres } from '../support/bench-postgres.js';
import { runBackfill, type BackfillRun } from '../support/backfill-run.js';
import { fetchOnly, type FetchCount } from '../support/fetch-only.js';
import { captureRows, LoaderSink, replayLoads, type SinkTime } from '../support/load-replay.js';
import { DuckDbRawLoad, PostgresRawLoad } from '../support/raw-bulk-load.js';
import { unlessSmoke } from '../support/bench-mode.js';

/** `BENCH_SCALE=0.1 npm run bench -- end-to-end`: a tenth of the customers, for a quick look (the targets still apply). */
const SCALE = unlessSmoke(Number(process.env.BENCH_SCALE ?? 1), 0.002);

/** A year of history, backfilled the way a data engineer would for the nightly job. */
const FROM = '2024-01-01';
const TO = unlessSmoke('2024-12-31', '2024-01-31');
const TIMEZONE = 'Europe/Athens';

/**
 * The job: the nightly grid (1-day windows: a backfill fills the same window ledger the nightly `run` keeps), the
 * default page size and concurrency, postings spans of a whole year so that each customer is asked once, and a
 * rate limit out of the way (the source answers at once: the pipeline, not the limit, sets the pace).
 */
const JOB: Omit<BenchJob, 'url' | 'streams'> = {
  timezone: TIMEZONE,
  firstDay: FROM,
  pageSize: 500,
  concurrency: 4,
  requestsPerSecond: 5000,
  windowDays: 1,
  postingsSpanDays: 366,
};

interface Workload {
  stream: StreamName;
  /** The emulated source. About 2 account export records (1-day windows) and 17 postings per customer a year. */
  dataset: EmulatorOptions;
  /** Loaded first, untimed: postings ask the customers `accounts` holds. */
  before?: StreamName;
}

const WORKLOADS: Workload[] = [
  {
    stream: 'accounts',
    dataset: { seed: 1, accounts: Math.round(510_000 * SCALE), startDate: FROM, endDate: TO, timezone: TIMEZONE },
  },
  {
    stream: 'loyalty_postings',
    dataset: { seed: 2, accounts: Math.round(60_000 * SCALE), startDate: FROM, endDate: TO, timezone: TIMEZONE },
    before: 'accounts',
  },
];

/** Goals: the pipeline's rate ÷ the fetch-only rate; the loader's ÷ the raw bulk load's; the pipeline's CPU ÷ the fetch-only pass's. */
const TARGET = 0.25;
const LOADER_TARGET = { duckdb: 0.5, postgres: 0.3 } as const;
const CPU_TARGET = 3;
const DESTINATIONS = ['duckdb', 'postgres'] as const;
type DestinationName = (typeof DESTINATIONS)[number];

interface WorkloadResult {
  stream: StreamName;
  customers: number;
  fetch: FetchCount;
  pipeline: Record<DestinationName, BackfillRun>;
  /** CPU seconds the emulator (the source) used while the fetch-only pass and each pipeline run read it. */
  sourceCpuSeconds: { fetch: number } & Record<DestinationName, number>;
  capture: { records: number; rowsByTable: Record<string, number>; seconds: number };
  loads: SinkTime[];
  loadAverage: number[];
}

/**
 * End-to-end backfill throughput into DuckDB and PostgreSQL beside (a) the fetch-only baseline over the same
 * pages and (b) a raw bulk load of the same rows, so the pipeline's and the loader's overheads show as ratios.
 */
export const endToEnd: BenchSection = {
  name: 'end-to-end',
  title: `backfill of a year of accounts and of postings into DuckDB and PostgreSQL: pipeline ÷ fetch-only (≥ ${TARGET * 100}%), loader ÷ raw bulk load (≥ ${LOADER_TARGET.duckdb * 100}% / ${LOADER_TARGET.postgres * 100}%), pipeline CPU ÷ fetch-only CPU (≤ ${CPU_TARGET}×)`,
  async run() {
    const dir = mkdtempSync(join(tmpdir(), 'loyalty-bench-e2e-'));
    const postgres = await startBenchPostgres();
    const results: WorkloadResult[] = [];
    try {
      for (const workload of WORKLOADS) results.push(await measure(workload, dir, postgres));
    } finally {
      await postgres.stop();
      rmSync(dir, { recursive: true, force: true });
    }
    const rows: Array<Record<string, string | number>> = [];
    const checks: BenchCheck[] = [];
    for (const r of results) {
      for (const name of DESTINATIONS) {
        const run = r.pipeline[name];
        const pipelineRate = run.extracted / run.runSeconds;
        const fetchRate = r.fetch.records / r.fetch.seconds;
        const loader = r.loads.find((l) => l.sink === `${name} loader`)!;
        const raw = r.loads.find((l) => l.sink === `${name} raw`)!;
        const loaderRate = loader.rows / loader.seconds;
        const rawRate = raw.rows / raw.seconds;
        const fetchCpu = r.fetch.cpuSeconds + r.sourceCpuSeconds.fetch;
        const cpuRatio = run.cpuSeconds / fetchCpu;
        rows.push({
          stream: r.stream,
          destination: name,
          records: run.extracted,
          'pipeline s': round(run.runSeconds, 1),
          'pipeline rec/s': Math.round(pipelineRate),
          'fetch-only rec/s': Math.round(fetchRate),
          'pipeline ÷ fetch': pct(pipelineRate / fetchRate),
          'rows staged': loader.rows,
          'loader rows/s': Math.round(loaderRate),
          'raw rows/s': Math.round(rawRate),
          'loader ÷ raw': pct(loaderRate / rawRate),
          'peak RSS MB': Math.round(run.peakRssBytes / 2 ** 20),
          'pipeline CPU s': round(run.cpuSeconds, 1),
          'source CPU s': round(r.sourceCpuSeconds[name], 1),
          'fetch-only CPU s': round(fetchCpu, 1),
          'CPU ÷ fetch': `${round(cpuRatio, 1)}×`,
        });
        checks.push({
          name: `${r.stream} → ${name}: pipeline vs fetch-only`,
          passed: pipelineRate / fetchRate >= TARGET,
          detail: `${pct(pipelineRate / fetchRate)} of the fetch-only rate (target ≥ ${TARGET * 100}%)`,
        });
        checks.push({
          name: `${r.stream} → ${name}: loader vs raw bulk load`,
          passed: loaderRate / rawRate >= LOADER_TARGET[name],
          detail: `${pct(loaderRate / rawRate)} of the raw ${name === 'duckdb' ? 'appender' : 'COPY'} rate (target ≥ ${LOADER_TARGET[name] * 100}%)`,
        });
        checks.push({
          name: `${r.stream} → ${name}: pipeline CPU vs fetch-only CPU`,
          passed: cpuRatio <= CPU_TARGET,
          detail: `${round(cpuRatio, 1)}× the CPU of the fetch-only pass and its source (target ≤ ${CPU_TARGET}×)`,
        });
        checks.push({
          name: `${r.stream} → ${name}: same records`,
          passed: run.extracted === r.fetch.records && run.extracted >= 1_000_000 * SCALE && run.rejected === 0,
          detail: `pipeline read ${run.extracted}, fetch-only ${r.fetch.records}, rejected ${run.rejected} (at least ${1_000_000 * SCALE} needed)`,
        });
      }
    }
    return {
      settings: {
        from: FROM,
        to: TO,
        job: JOB,
        workloads: WORKLOADS,
        scale: SCALE,
        targetShare: TARGET,
        loaderTarget: LOADER_TARGET,
        cpuTarget: CPU_TARGET,
        postgres: postgres.origin,
      },
      rows,
      checks,
      notes: [
        `job: ${JOB.windowDays}-day windows (the nightly grid), page size ${JOB.pageSize}, concurrency ${JOB.concurrency}, postings spans of ${JOB.postingsSpanDays} days (each customer asked once), customers: all; emulator in its own process, no latency.`,
        "pipeline: `loyalty-etl backfill` as a process of its own; its time is the run's own (`_etl_runs`), records are those its windows read. fetch-only: the same extractor, client and concurrency in the bench process, records dropped.",
        `CPU: user and system seconds. pipeline: the \`loyalty-etl\` process over its whole life (start-up and migrations included), DuckDB's threads included; source: the emulator's process while the pipeline read it; fetch-only: the fetching process and the emulator's. The machine has ${cpus().length} cores for all of them (and PostgreSQL's server).`,
        "loader: the same rows (fetched and normalized beforehand) staged and committed span by span through the destination (staging, merge, ledger, watermark); raw: the same rows appended (DuckDB appender) or COPYed (50k rows per COPY) into plain tables of the target's columns with no key (the rows hold every version of a record), with no staging, merge or ledger. Only the loaders' own calls are timed.",
      ],
      data: results.map((r) => ({
        ...r,
        pipeline: Object.fromEntries(
          Object.entries(r.pipeline).map(([k, v]) => [k, { ...v, stdout: undefined, stderr: undefined }]),
        ),
      })),
    };
  },
};

async function measure(workload: Workload, dir: string, postgres: BenchPostgres): Promise<WorkloadResult> {
  const emulator = await startBenchEmulator({ ...workload.dataset, port: 0 });
  const load = loadavg();
  try {
    const job: BenchJob = {
      ...JOB,
      url: emulator.url,
      streams: workload.before ? [workload.before, workload.stream] : [workload.stream],
    };
    const tables = streamDefinition(workload.stream).tables.map((t) => t.name);
    const destinations: Record<DestinationName, DestinationSettings> = {
      duckdb: { type: 'duckdb', path: join(dir, `${workload.stream}-pipeline.duckdb`), schema: 'main' },
      postgres: { type: 'postgres', url: await postgres.freshDatabase(), schema: 'public' },
    };
    const jobs = Object.fromEntries(DESTINATIONS.map((d) => [d, writeBenchJobs(job, destinations[d], dir)])) as Record<
      DestinationName,
      ReturnType<typeof writeBenchJobs>
    >;
    const before = async (d: DestinationName) => {
      if (workload.before) await runBackfill(jobs[d].file, destinations[d], workload.before, FROM, TO, []);
    };
    progress(`${workload.stream}: ${workload.dataset.accounts} customers`);

    await before('duckdb');
    const customers = workload.before ? await openDestination(destinations.duckdb) : undefined;
    // the emulator's CPU time since it was last asked
    const sourceCpu = async () => (await emulator.takeArrivals()).cpuMs / 1000;
    let fetch: FetchCount;
    const sourceCpuSeconds = {} as WorkloadResult['sourceCpuSeconds'];
    try {
      await sourceCpu();
      fetch = await fetchOnly(jobs.duckdb.config, 'bench', workload.stream, FROM, TO, customers);
      sourceCpuSeconds.fetch = await sourceCpu();
    } finally {
      await customers?.close();
    }
    progress(`  fetch-only: ${fetch.records} records in ${fetch.seconds.toFixed(1)} s`);
    const pipeline = {} as Record<DestinationName, BackfillRun>;
    for (const d of DESTINATIONS) {
      if (d !== 'duckdb') await before(d);
      await sourceCpu();
      pipeline[d] = await runBackfill(jobs[d].file, destinations[d], workload.stream, FROM, TO, tables);
      sourceCpuSeconds[d] = await sourceCpu();
      progress(`  pipeline → ${d}: ${pipeline[d].extracted} records in ${pipeline[d].runSeconds.toFixed(1)} s`);
    }

    const reader = workload.before ? await openDestination(destinations.duckdb) : undefined;
    let capture: Awaited<ReturnType<typeof captureRows>>;
    try {
      capture = await captureRows(
        jobs.duckdb.config,
        'bench',
        workload.stream,
        FROM,
        TO,
        join(dir, `${workload.stream}-rows.jsonl`),
        reader,
      );
    } finally {
      await reader?.close();
    }
    const sinks = [
      new LoaderSink(
        'duckdb loader',
        await openDestination({ type: 'duckdb', path: join(dir, `${workload.stream}-loader.duckdb`), schema: 'main' }),
        'bench',
        workload.stream,
        FROM,
      ),
      await DuckDbRawLoad.open(join(dir, `${workload.stream}-raw.duckdb`)),
      new LoaderSink(
        'postgres loader',
        await openDestination({ type: 'postgres', url: await postgres.freshDatabase(), schema: 'public' }),
        'bench',
        workload.stream,
        FROM,
      ),
      await PostgresRawLoad.open(await postgres.freshDatabase()),
    ];
    let loads: SinkTime[];
    try {
      loads = await replayLoads(capture, streamDefinition(workload.stream).tables, sinks);
    } finally {
      for (const sink of sinks) await sink.close();
      rmSync(capture.file, { force: true });
    }
    for (const l of loads) progress(`  ${l.sink}: ${l.rows} rows in ${l.seconds.toFixed(1)} s`);
    const { file: _file, ...captured } = capture;
    return {
      stream: workload.stream,
      customers: workload.dataset.accounts!,
      fetch,
      pipeline,
      sourceCpuSeconds,
      capture: captured,
      loads,
      loadAverage: load,
    };
  } finally {
    await emulator.close();
  }
}

function progress(line: string): void {
  process.stderr.write(`${new Date().toISOString().slice(11, 19)} ${line}\n`);
}

function pct(share: number): string {
  return `${(share * 100).toFixed(1)}%`;
}

function round(value: number, places: number): number {
  return Math.round(value * 10 ** places) / 10 ** places;
}
