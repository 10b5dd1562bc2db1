import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { busiestSecond } from '../../bench/support/busiest-second.js';
import type { Middleware } from '../../src/emulator/index.js';
import { emulatorJobs, startCli } from '../helpers/cli.js';
import { postgresTestDestination } from '../helpers/destinations.js';
import { withWarehouse } from '../helpers/warehouse-reader.js';
import { useEmulator } from '../helpers/suite-emulator.js';

const TZ = 'Europe/Athens';
const FROM = '2024-01-01';
const TO = '2024-04-02'; // 93 daily windows per stream: three spans of 31 days each
const LIMIT = 20;

describe('three workers sharing a backfill share the source rate limit (PostgreSQL)', () => {
  /** When each request reached the source (ms). */
  const arrivals: number[] = [];
  const clock: Middleware = (request, next) => {
    if (!request.path.startsWith('/_emulator')) arrivals.push(performance.now());
    return next(request);
  };
  // The source answers 10 ms after a request arrives, and the clock reads the arrival before that wait: behind the
  // emulator's latency fault (which runs before any hook) it read the wait's timer too, often late in this busy process.
  const latency: Middleware = async (request, next) => {
    await sleep(10);
    return next(request);
  };
  const emulator = useEmulator({
    seed: 43,
    accounts: 100,
    startDate: FROM,
    endDate: TO,
    timezone: TZ,
    hooks: { middleware: [clock, latency] },
  });

  it(`together they stay within source.requests_per_second (${LIMIT}) in the busiest second`, async () => {
    const { config } = await postgresTestDestination.fresh();
    const file = emulatorJobs({
      url: emulator.url,
      timezone: TZ,
      firstDay: FROM,
      destination: config,
      streams: ['accounts', 'surveys'],
      pageSize: 5,
      sourceKeys: { requests_per_second: LIMIT },
    });
    // one span at a time each, so that the three spans of a stream go to three workers
    const args = ['backfill', '--config', file, '--from', FROM, '--to', TO, '--concurrency', '1'];
    const workers = [startCli(args), startCli(args), startCli(args)];
    const results = await Promise.all(workers.map((w) => w.done));
    for (const r of results) expect(r.code, r.stderr.slice(-800)).toBe(0);

    // each of them worked, and the source saw enough requests for a second of each alone to exceed the limit
    await withWarehouse(config, async (conn) => {
      const loaders = await conn.all(`SELECT DISTINCT run_id FROM _etl_windows WHERE status = 'done'`);
      expect(loaders).toHaveLength(3);
    });
    expect(arrivals.length).toBeGreaterThan(3 * LIMIT);
    expect(busiestSecond(arrivals)).toBeLessThanOrEqual(LIMIT);
  });
});
