import { createApi } from '../../src/commands/job-session.js';
import type { StreamName } from '../../src/plan/job-plan.js';
import type { ResolvedConfig } from '../../src/config/load-config.js';
import type { Destination } from '../../src/load/destination.js';
import { silentLogger } from '../../src/log/logger.js';
import { planRange } from '../../src/plan/plan-windows.js';
import { groupWindows, type Window } from '../../src/plan/windows.js';
import type { CustomerIdentity, LoyaltyApi } from '../../src/source/loyalty-api.js';
import { selectCustomers } from '../../src/state/customer-selection.js';
import { streamDefinition } from '../../src/streams/registry.js';
import type { StreamContext } from '../../src/streams/stream.js';

/** What a fetch-only pass read. */
export interface FetchCount {
  records: number;
  batches: number;
  requests: number;
  seconds: number;
  /** User and system CPU time of the process that fetched (the bench's own, doing nothing else meanwhile). */
  cpuSeconds: number;
}

/** The spans a backfill of `[from, to]` loads for `stream`, as its window queue groups them. */
export function backfillSpans(
  config: ResolvedConfig,
  job: string,
  stream: StreamName,
  from: string,
  to: string,
): Window[][] {
  const jobConfig = config.jobs[job]!;
  const perSpan = streamDefinition(stream).maxWindowsPerSpan(jobConfig);
  return groupWindows(planRange(jobConfig, from, to), perSpan * jobConfig.window_days);
}

/**
 * The context `span` of `job` is extracted in, as the pipeline builds it, with its own request count and no logs;
 * a per-customer stream asks the customers `destination` holds that the selection `all` picks for that span.
 */
export function benchStreamContext(
  config: ResolvedConfig,
  job: string,
  api: LoyaltyApi,
  span: Window[],
  destination?: Destination,
): StreamContext {
  return {
    api: api.scoped(),
    pageSize: config.source.page_size,
    concurrency: config.source.concurrency,
    timezone: config.source.timezone,
    job,
    jobConfig: config.jobs[job]!,
    logger: silentLogger,
    // postings ask every customer the pipeline loaded, as the selection `all` does
    customers: destination === undefined ? undefined : customersOf(destination, span),
  };
}

/**
 * The fetch-only baseline: the stream's own extractor over the spans a backfill of `[from, to]` loads, through
 * the same client (rate limit, concurrency cap, read-ahead, completeness checks), `source.concurrency` spans
 * at a time as `backfill` runs them; records are counted and dropped — no validation, normalization or load.
 * `customers` is the warehouse postings read their customer list from (the one the pipeline loaded).
 */
export async function fetchOnly(
  config: ResolvedConfig,
  job: string,
  stream: StreamName,
  from: string,
  to: string,
  customers?: Destination,
): Promise<FetchCount> {
  const definition = streamDefinition(stream);
  const api = createApi(config, silentLogger);
  const queue = backfillSpans(config, job, stream, from, to);
  let records = 0;
  let batches = 0;
  const lane = async () => {
    for (let span = queue.shift(); span; span = queue.shift()) {
      for await (const batch of definition.extract(benchStreamContext(config, job, api, span, customers), span)) {
        records += batch.records.length;
        batches++;
      }
    }
  };
  const started = performance.now();
  const cpu = process.cpuUsage();
  await Promise.all(Array.from({ length: config.source.concurrency }, lane));
  const used = process.cpuUsage(cpu);
  return {
    records,
    batches,
    requests: api.http.requestCount,
    seconds: (performance.now() - started) / 1000,
    cpuSeconds: (used.user + used.system) / 1e6,
  };
}

/** The customers in `accounts` the selection `all` picks for `span`, in key order, streamed from the warehouse. */
async function* customersOf(destination: Destination, span: Window[]): AsyncGenerator<CustomerIdentity> {
  const selection = await selectCustomers(
    (fn) => destination.withConnection(fn),
    'bench',
    'loyalty_postings',
    'all',
    span,
  );
  yield* selection.customers;
}
