import { describe, expect, it, vi } from 'vitest';
import { openDestination } from '../../src/load/warehouses.js';
import { silentLogger } from '../../src/log/logger.js';
import { shareSourceRate } from '../../src/pipeline/source-rate-share.js';
import { HttpClient } from '../../src/source/http-client.js';
import { beginRun } from '../../src/state/runs.js';
import { postgresTestDestination } from '../helpers/destinations.js';

const LIMIT = 20;

describe('runs sharing the source rate limit on PostgreSQL', () => {
  it('a run that joins others counts them again when its wait ends: one that joined meanwhile lowers its share before its first request', async () => {
    const { config } = await postgresTestDestination.fresh();
    const destination = await openDestination(config);
    try {
      const begin = (runId: string) =>
        destination.ledgerTransaction((conn) =>
          beginRun(conn, destination.capabilities, {
            runId,
            job: 'nightly',
            command: 'backfill',
            startedAt: new Date().toISOString(),
            host: 'test-host',
            pid: process.pid,
            leaseSeconds: 60,
          }),
        );
      await begin('working');
      await begin('joining');
      // no request is sent here: only the client's rate is read
      const http = new HttpClient({
        baseUrl: 'http://127.0.0.1:9',
        timeoutMs: 1000,
        retries: 0,
        requestsPerSecond: LIMIT,
        concurrency: 1,
        logger: silentLogger,
      });
      const joined = shareSourceRate(destination, http, LIMIT, silentLogger);
      await vi.waitFor(() => expect(http.requestsPerSecond).toBe(LIMIT / 2), { timeout: 10_000 });
      await begin('third'); // while the joining run waits for the working one to count it
      const share = await joined;
      share.stop();
      expect(http.requestsPerSecond).toBe(Math.floor(LIMIT / 3));
    } finally {
      await destination.close();
    }
  });
});
