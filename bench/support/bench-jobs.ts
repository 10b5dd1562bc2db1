import { mkdtempSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { DestinationSettings, StreamName } from '../../src/plan/job-plan.js';
import { parseConfig, type ResolvedConfig } from '../../src/config/load-config.js';

/** The source settings and the job a bench loads with. */
export interface BenchJob {
  url: string;
  timezone: string;
  firstDay: string;
  streams: StreamName[];
  pageSize: number;
  concurrency: number;
  requestsPerSecond: number;
  windowDays: number;
  /** Days of one postings span: each customer is asked once per span. */
  postingsSpanDays: number;
  /** `source.history_start`, where the customer directory starts; the config's default when omitted. */
  historyStart?: string;
  /** `source.timeout_ms`; 120000 when omitted. */
  timeoutMs?: number;
  /** `source.retries`; 2 when omitted. */
  retries?: number;
}

/** `jobs.yaml` text of a {@link BenchJob} loading into `destination`; the job is named `bench`. */
export function benchJobsYaml(job: BenchJob, destination: DestinationSettings): string {
  const target =
    destination.type === 'duckdb'
      ? `  type: duckdb\n  path: ${JSON.stringify(destination.path)}\n  schema: ${destination.schema}${destination.memory_limit ? `\n  memory_limit: ${destination.memory_limit}` : ''}${destination.staging_memory ? `\n  staging_memory: ${destination.staging_memory}` : ''}`
      : `  type: postgres\n  url: ${JSON.stringify(destination.url)}\n  schema: ${destination.schema}`;
  return `source:
  base_url: ${job.url}
  timezone: ${job.timezone}
  page_size: ${job.pageSize}
  concurrency: ${job.concurrency}
  requests_per_second: ${job.requestsPerSecond}
  retries: ${job.retries ?? 2}
  timeout_ms: ${job.timeoutMs ?? 120_000}${job.historyStart ? `\n  history_start: ${job.historyStart}` : ''}
destination:
${target}
jobs:
  bench:
    streams: [${job.streams.join(', ')}]
    window_days: ${job.windowDays}
    lookback_days: 0
    first_day: ${job.firstDay}
    reject_threshold: 0.1
    postings:
      customers: all
      max_span_days: ${job.postingsSpanDays}
`;
}

/** Writes the jobs file into a fresh directory under `dir` (the section's own); returns its path and the resolved config. */
export function writeBenchJobs(
  job: BenchJob,
  destination: DestinationSettings,
  dir: string,
): { file: string; config: ResolvedConfig } {
  const text = benchJobsYaml(job, destination);
  const file = join(mkdtempSync(join(dir, 'jobs-')), 'jobs.yaml');
  writeFileSync(file, text);
  return { file, config: parseConfig(text, file, {}) };
}
