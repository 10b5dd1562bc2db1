import { afterAll, describe, expect, it } from 'vitest';
import { type Emulator, type EmulatorReadings, startEmulator } from '../../src/emulator/index.js';
import { silentLogger } from '../../src/log/logger.js';
import { HttpClient } from '../../src/source/http-client.js';
import { LoyaltyApi } from '../../src/source/loyalty-api.js';
import {
  DataNotFoundError,
  FatalSourceError,
  FieldsRequiredError,
  RetriableSourceError,
} from '../../src/source/source-errors.js';

const DATASET = { seed: 7, accounts: 60, endDate: '2024-11-15' } as const;
const started: Emulator[] = [];
afterAll(() => Promise.all(started.map((e) => e.close())));

async function apiFor(readings: EmulatorReadings): Promise<{ api: LoyaltyApi<HttpClient>; emulator: Emulator }> {
  const emulator = await startEmulator({ ...DATASET, readings });
  started.push(emulator);
  const http = new HttpClient({
    baseUrl: emulator.url,
    timeoutMs: 5000,
    retries: 2,
    requestsPerSecond: 1000,
    concurrency: 2,
    logger: silentLogger,
    backoffBaseMs: 1,
  });
  return { api: new LoyaltyApi(http), emulator };
}

const NOBODY = { customerId: 'C999999', phone: '300000000000', email: null };

describe('1xxx errors under every status and body shape the spec leaves open', () => {
  const statuses = ['mapped', 200, 400, 404, 500] as const;
  const bodies = ['code-message', 'nested', 'status-fields', 'text'] as const;
  const cases = statuses.flatMap((errorStatus) => bodies.map((errorBody) => ({ errorStatus, errorBody })));

  it.each(cases)(
    '$errorStatus / $errorBody: 1005 is no data, 1010 names its meaning, and neither is retried',
    async (readings) => {
      const { api, emulator } = await apiFor(readings);
      const status = readings.errorStatus === 'mapped' ? 404 : readings.errorStatus;
      const none = await api.postingsPage(NOBODY, 1, 10).catch((e: unknown) => e);
      expect(none).toBeInstanceOf(DataNotFoundError);
      expect((none as Error).message).toBe(`postings of C999999 page 1: 1005 Data Not Found (HTTP ${status})`);
      const lookup = await api.loyaltyOf(NOBODY).catch((e: unknown) => e);
      expect(lookup).toBeInstanceOf(DataNotFoundError);
      const required = await api.http.get('/accounts/vouchers/get', {}, 'vouchers').catch((e: unknown) => e);
      expect(required).toBeInstanceOf(FieldsRequiredError);
      expect((required as Error).message).toBe(
        `vouchers: 1010 At least one of the following fields is required: phone, email (HTTP ${readings.errorStatus === 'mapped' ? 400 : readings.errorStatus})`,
      );
      expect(emulator.stats.requests()).toBe(3); // none retried, a 500 included
    },
  );

  it.each(bodies)('%s: an HTTP error keeps its status and says what the body said', async (errorBody) => {
    const { api } = await apiFor({ errorStatus: 200, errorBody });
    const failure = await api.http
      .get('/business-data/accounts', { start: '2024-09-02', end: '2024-09-01', page: 1, size: 10 }, 'accounts')
      .catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(FatalSourceError);
    expect(failure).not.toBeInstanceOf(RetriableSourceError);
    expect((failure as Error).message).toMatch(/^accounts: HTTP 400/);
    if (errorBody !== 'text') expect((failure as Error).message).toContain('start 2024-09-02 is after end 2024-09-01');
  });

  it('never takes an error body of an HTTP 200 for data, in any shape', async () => {
    for (const errorBody of bodies) {
      const { api, emulator } = await apiFor({ errorStatus: 200, errorBody });
      emulator.faults.set({});
      // a 1006 error answered with 200 in place of the lookup: a failure, not an answer without loyalty
      const failure = await api.http.get('/accounts/integrations', {}, 'integration').catch((e: unknown) => e);
      expect(failure).toBeInstanceOf(Error); // 405: the path takes POST
      const post = await api.http.post('/accounts/integrations', {}, 'integration').catch((e: unknown) => e);
      expect(post).toBeInstanceOf(FieldsRequiredError);
      expect((post as Error).message).toMatch(
        /^integration: 1010 At least one of the following fields is required: integrationToken \(HTTP 200\)$/,
      );
    }
  });
});
