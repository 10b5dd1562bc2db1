import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { busiestSecond } from '../../bench/support/busiest-second.js';
import { type Emulator, type Middleware, startEmulator } from '../../src/emulator/index.js';
import { silentLogger } from '../../src/log/logger.js';
import { HttpClient } from '../../src/source/http-client.js';

const PATH = '/business-data/accounts';
const LIMIT = 3;

/** Keeps this process busy for `ms`, as parsing a large page or a garbage collection would. */
function busyFor(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until);
}

describe('the rate limit, where requests reach the source', () => {
  let emulator: Emulator;
  /** When each request reached the source (ms). */
  const arrivals: number[] = [];
  beforeAll(async () => {
    const clock: Middleware = (request, next) => {
      arrivals.push(performance.now());
      return next(request);
    };
    emulator = await startEmulator({ seed: 5, accounts: 50, endDate: '2024-11-15', hooks: { middleware: [clock] } });
  });
  afterAll(() => emulator.close());

  it('counts a request from when it leaves: one held up on its way out does not share a second at the source with those sent a window later', async () => {
    const http = new HttpClient({
      baseUrl: emulator.url,
      timeoutMs: 10_000,
      retries: 0,
      requestsPerSecond: LIMIT,
      concurrency: LIMIT,
      logger: silentLogger,
    });
    // The process stalls after its first requests are asked for and before they are written, as a worker does
    // while it opens its first connections and parses a page: they reach the source 400 ms late.
    let stalled = false;
    const stall = () => {
      if (stalled) return;
      stalled = true;
      busyFor(400);
    };
    subscribe('undici:request:create', stall);
    try {
      const pages = Array.from({ length: 3 * LIMIT }, (_, i) =>
        http.get(PATH, { start: '2024-09-01', end: '2024-09-30', page: i + 1, size: 5 }),
      );
      await Promise.all(pages);
    } finally {
      unsubscribe('undici:request:create', stall);
    }
    expect(stalled).toBe(true);
    expect(arrivals).toHaveLength(3 * LIMIT);
    expect(busiestSecond(arrivals)).toBeLessThanOrEqual(LIMIT);
  });
});
