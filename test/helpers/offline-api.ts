import type { Destination } from '../../src/load/destination.js';
import { silentLogger } from '../../src/log/logger.js';
import { loadSpan } from '../../src/pipeline/load-span.js';
import type { Window } from '../../src/plan/windows.js';
import { HttpClient } from '../../src/source/http-client.js';
import { LoyaltyApi } from '../../src/source/loyalty-api.js';
import type { StreamContext, StreamDefinition } from '../../src/streams/stream.js';

/**
 * A client of a service that is never there (port 9, no retries): for suites that hand records to the loader
 * themselves, where a stream context needs an api but nothing may be asked of the source.
 */
export function offlineApi(): LoyaltyApi {
  return new LoyaltyApi(
    new HttpClient({
      baseUrl: 'http://127.0.0.1:9',
      timeoutMs: 100,
      retries: 0,
      requestsPerSecond: 1,
      concurrency: 1,
      logger: silentLogger,
    }),
  );
}

/** A stream context over {@link offlineApi}: for loading records a suite hands over itself. */
export function offlineContext(options: { job: string; firstDay: string; timezone: string }): StreamContext {
  return {
    api: offlineApi(),
    pageSize: 100,
    concurrency: 1,
    timezone: options.timezone,
    job: options.job,
    logger: silentLogger,
    jobConfig: {
      streams: [],
      window_days: 1,
      lookback_days: 0,
      first_day: options.firstDay,
      reject_threshold: 1,
      sweep_days: 7,
      postings: { customers: 'all', max_span_days: 1 },
    },
  };
}

/** Loads `records` as `stream` extracted them for `window`, one span through the pipeline's own `loadSpan`. */
export async function loadRecords(
  stream: StreamDefinition,
  window: Window,
  records: unknown[],
  ctx: StreamContext,
  destination: Destination,
  runId: string,
): Promise<void> {
  const inMemory: StreamDefinition = {
    ...stream,
    extract: async function* () {
      yield { windowStart: window.start, records, restart: false };
    },
  };
  await loadSpan(
    inMemory,
    [window],
    ctx,
    destination,
    { job: ctx.job, runId, firstDay: ctx.jobConfig.first_day, rejectThreshold: 1 },
    silentLogger,
  );
}
