import { silentLogger } from '../../src/log/logger.js';
import { HttpClient } from '../../src/source/http-client.js';
import { LoyaltyApi } from '../../src/source/loyalty-api.js';

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
