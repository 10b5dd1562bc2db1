import { appendFileSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import parsePrometheusTextFormat from 'parse-prometheus-text-format';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator, type Emulator, type Middleware } from '../../src/emulator/index.js';
import type { JobStatus } from '../../src/state/status-report.js';
import { emulatorJobs, runCli, runCliProcess, startCli } from '../helpers/cli.js';
import { waitForOutput } from '../helpers/request-gate.js';
import { testDestinations } from '../helpers/destinations.js';
import { testTempDir } from '../helpers/temp-dir.js';

const TZ = 'Europe/Athens';
const START = '2024-05-01';
const END = '2024-05-30';
const STREAMS = ['accounts', 'surveys', 'loyalty_postings', 'loyalty_status', 'vouchers'];

/** The metrics file read by a parser of Prometheus' text format: a family's value for the labels given. */
function readMetrics(path: string): (name: string, labels: Record<string, string>) => number | undefined {
  return metricsOf(readFileSync(path, 'utf8'));
}

/** Metrics text read by a parser of Prometheus' text format. */
function metricsOf(text: string): (name: string, labels: Record<string, string>) => number | undefined {
  const families = parsePrometheusTextFormat(text);
  return (name, labels) => {
    const family = families.find((f) => f.name === name);
    const sample = family?.metrics.find((m) => Object.entries(labels).every(([k, v]) => m.labels?.[k] === v));
    return sample === undefined ? undefined : Number(sample.value);
  };
}

/** stderr's lines less the closing `loyalty-etl: …` line, each parsed: every one must be a JSON object. */
function logLines(stderr: string): Array<Record<string, unknown>> {
  const lines = stderr.trim().split('\n');
  if (lines.at(-1)?.startsWith('loyalty-etl: ')) lines.pop();
  return lines.map((l) => JSON.parse(l) as Record<string, unknown>);
}

describe.each(testDestinations)('the operator’s night, into $name', (target) => {
  let emulator: Emulator;
  /** Streams whose endpoint answers HTTP 500 to every request (the service broken for them). */
  const broken = new Set<string>();
  beforeAll(async () => {
    const fail: Middleware = async (request, next) =>
      broken.has(request.path)
        ? { status: 500, headers: { 'content-type': 'application/json' }, body: '{"code":500,"message":"down"}' }
        : next(request);
    emulator = await startEmulator({
      seed: 12,
      accounts: 60,
      startDate: START,
      endDate: END,
      timezone: TZ,
      hooks: { middleware: [fail] },
    });
  });
  afterAll(() => emulator.close());

  async function jobsFile(sourceKeys: Record<string, string | number> = {}) {
    const { config } = await target.fresh();
    return emulatorJobs({
      url: emulator.url,
      timezone: TZ,
      firstDay: START,
      destination: config,
      streams: STREAMS,
      pageSize: 20,
      sourceKeys: { retries: 0, ...sourceKeys },
    });
  }

  it('writes the metrics file a textfile collector reads, agreeing with status --json', async () => {
    const file = await jobsFile({ retries: 5, backoff_base_ms: 1, backoff_max_ms: 5 });
    const metrics = join(testTempDir('metrics-'), 'loyalty.prom');
    // a flaky service: some requests answer 500 and are tried again, which the retries count
    emulator.faults.set({ serverErrorRate: 0.05 });
    const run = await runCli(['run', '--config', file, '--until', END, '--metrics-file', metrics]);
    emulator.faults.set({ serverErrorRate: 0 });
    expect(run.code, run.stderr.slice(-600)).toBe(0);
    const status = await runCli(['status', '--config', file, '--json']);
    const { job, streams, runs } = JSON.parse(status.stdout) as JobStatus;
    const value = readMetrics(metrics);
    for (const s of streams) {
      const labels = { job, stream: s.stream };
      expect(value('loyalty_etl_rows_loaded', labels)).toBe(s.rowsLoaded);
      expect(value('loyalty_etl_records_rejected', labels)).toBe(s.rejects);
      expect(value('loyalty_etl_fields_rejected', labels)).toBe(s.fieldRejects);
      expect(value('loyalty_etl_windows', { ...labels, status: 'done' })).toBe(s.windowsDone);
      expect(value('loyalty_etl_windows', { ...labels, status: 'failed' })).toBe(s.windowsFailed);
      expect(value('loyalty_etl_windows', { ...labels, status: 'pending' })).toBe(s.windowsPending);
      expect(value('loyalty_etl_lag_days', labels)).toBe(s.lagDays);
      expect(value('loyalty_etl_requests', labels)).toBe(s.requests);
      expect(value('loyalty_etl_retries', labels)).toBe(s.retries);
    }
    expect(streams.map((s) => s.stream)).toEqual(STREAMS);
    const last = runs[0]!;
    const labels = { job, command: 'run' };
    expect(value('loyalty_etl_last_run_outcome', { ...labels, outcome: 'succeeded' })).toBe(1);
    expect(value('loyalty_etl_last_run_outcome', { ...labels, outcome: 'failed' })).toBe(0);
    expect(value('loyalty_etl_last_run_requests', labels)).toBe(last.requests);
    expect(value('loyalty_etl_last_run_retries', labels)).toBe(last.retries);
    const streamRetries = streams.reduce((sum, s) => sum + s.retries, 0);
    expect(streamRetries).toBeGreaterThan(0);
    expect(streamRetries).toBeLessThanOrEqual(last.retries!);
    expect(value('loyalty_etl_last_run_rows_loaded', labels)).toBe(last.rowsLoaded);
    expect(value('loyalty_etl_last_run_duration_seconds', labels)).toBe(last.durationSeconds);
    expect(value('loyalty_etl_last_success_timestamp_seconds', labels)).toBe(
      value('loyalty_etl_last_run_finished_timestamp_seconds', labels),
    );
    // report --serve serves the same at /metrics
    const server = startCli([
      'report',
      '--config',
      file,
      '--output',
      join(testTempDir('page-'), 'status.html'),
      '--serve',
      '--port',
      '0',
    ]);
    try {
      await waitForOutput(server, /serving http:\/\/\S+/);
      const url = /serving (http:\/\/\S+)/.exec(server.output())![1]!;
      const answer = await fetch(new URL('metrics', url));
      expect(answer.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
      const served = metricsOf(await answer.text());
      for (const s of streams) expect(served('loyalty_etl_rows_loaded', { job, stream: s.stream })).toBe(s.rowsLoaded);
      expect(served('loyalty_etl_last_run_outcome', { ...labels, outcome: 'succeeded' })).toBe(1);
      // OpenMetrics to a scraper that asks for it
      const open = await fetch(new URL('metrics', url), { headers: { accept: 'application/openmetrics-text' } });
      expect(open.headers.get('content-type')).toMatch(/^application\/openmetrics-text; version=1\.0\.0/);
      expect((await open.text()).trimEnd().split('\n').at(-1)).toBe('# EOF');
    } finally {
      server.child.kill('SIGTERM');
      await server.done;
    }
    expect(value('loyalty_etl_last_success_timestamp_seconds', labels)! * 1000).toBeCloseTo(
      Date.parse(last.finishedAt!.replace(' ', 'T').replace(/([+-]\d\d)$/, '$1:00')),
      -2,
    );
    // a backfill writes them too: its own outcome, and the last success of each command
    const backfill = await runCli([
      'backfill',
      '--config',
      file,
      '--from',
      END,
      '--to',
      END,
      '--metrics-file',
      metrics,
    ]);
    expect(backfill.code).toBe(0);
    const after = readMetrics(metrics);
    expect(after('loyalty_etl_last_run_outcome', { job, command: 'backfill', outcome: 'succeeded' })).toBe(1);
    expect(after('loyalty_etl_last_success_timestamp_seconds', { job, command: 'run' })).toBe(
      value('loyalty_etl_last_success_timestamp_seconds', labels),
    );
    expect(after('loyalty_etl_last_success_timestamp_seconds', { job, command: 'backfill' })).toBeGreaterThan(
      value('loyalty_etl_last_success_timestamp_seconds', labels)!,
    );
  });

  it('a run with failed windows: its last log line at error with the failures per stream, the summary naming them', async () => {
    const file = await jobsFile();
    // the metrics file named in jobs.yaml this time (`metrics.file`)
    const metrics = join(testTempDir('metrics-'), 'loyalty.prom');
    appendFileSync(file, `metrics:\n  file: ${JSON.stringify(metrics)}\n`);
    broken.add('/accounts/vouchers/get');
    try {
      const run = await runCli(['run', '--config', file, '--until', END]);
      expect(run.code).toBe(1);
      const logs = logLines(run.stderr);
      expect(logs.filter((l) => l.msg === 'window loaded')).toEqual([]);
      // the run's last line (a DuckDB warehouse's copy for readers is published after it)
      const closing = logs.filter((l) => l.runId !== undefined).at(-1)!;
      expect(closing).toMatchObject({ level: 'error', status: 'failed', windowsFailedByStream: { vouchers: 30 } });
      expect(logs.find((l) => l.msg === 'vouchers: 30 window(s) failed')).toMatchObject({ level: 'warn' });
      expect(logs.find((l) => l.msg === 'accounts done')).toMatchObject({ level: 'info', windowsFailed: 0 });
      expect(run.stdout).toMatch(/^vouchers: 0 windows read, .*; 30 windows FAILED \(first: 2024-05-01\b.*: /m);
      expect(run.stderr.trim().split('\n').at(-1)).toMatch(
        /^loyalty-etl: 30 window\(s\) failed; first: vouchers .* \(failed by stream: vouchers 30\)$/,
      );
      const value = readMetrics(metrics);
      expect(value('loyalty_etl_last_run_outcome', { job: 'nightly', command: 'run', outcome: 'failed' })).toBe(1);
      expect(value('loyalty_etl_last_run_windows_failed', { job: 'nightly', stream: 'vouchers' })).toBe(30);
      expect(value('loyalty_etl_windows', { job: 'nightly', stream: 'vouchers', status: 'failed' })).toBe(30);
    } finally {
      broken.clear();
    }
  });

  it('a source that is gone: the run stops asking after a few spans, says what it left, and names the source', async () => {
    const file = await jobsFile({ retries: 2, backoff_base_ms: 1, backoff_max_ms: 5 });
    const metrics = join(testTempDir('metrics-'), 'loyalty.prom');
    expect((await runCli(['run', '--config', file, '--until', '2024-05-03'])).code).toBe(0);
    const gone = await startEmulator({ seed: 12, accounts: 60, startDate: START, endDate: END, timezone: TZ });
    const url = gone.url;
    await gone.close();
    const run = await runCliProcess(['run', '--config', file, '--until', END, '--metrics-file', metrics], {
      LOYALTY_API_URL: url,
    });
    expect(run.code).toBe(1);
    const lines = run.stderr.trim().split('\n');
    expect(lines.filter((l) => l.startsWith('loyalty-etl: '))).toHaveLength(1);
    expect(lines.at(-1)).toMatch(
      new RegExp(
        `^loyalty-etl: source: ${url.replace(/\/$/, '')} gave no answer 3 times in a row, each after its retries .*stopped asking it \\(source\\.stop_after_no_answer\\): \\d+ window\\(s\\) not attempted, the next run takes them$`,
      ),
    );
    // each span in flight when it stopped spent its retries; none of the windows left was asked
    const retries = logLines(run.stderr).filter((l) => l.msg === 'retrying source request');
    expect(retries.length).toBeLessThanOrEqual((3 + 4) * 2 + 2);
    expect(run.stdout).toMatch(/^surveys: 0 windows read, .*; 27 windows not attempted, left for the next run$/m);
    const value = readMetrics(metrics);
    expect(value('loyalty_etl_last_run_outcome', { job: 'nightly', command: 'run', outcome: 'failed' })).toBe(1);
    expect(value('loyalty_etl_last_run_retries', { job: 'nightly', command: 'run' })).toBe(retries.length);
  });
});
