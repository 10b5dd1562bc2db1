import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Emulator } from '../../src/emulator/index.js';
import { LAST_DAY, call, start } from './emulator-fixture.js';

describe('errors', () => {
  let emulator: Emulator;
  let phone: string;
  beforeAll(async () => {
    emulator = await start({ maxPageSize: 500 });
    phone = [...emulator.truth.customers(LAST_DAY)].find((c) => c.phone)!.phone!;
  });
  afterAll(() => emulator.close());

  const badRequests = [
    ['start missing', '/business-data/accounts?end=2024-09-01&page=1&size=10'],
    ['start not a date', '/business-data/accounts?start=2024-9-1&end=2024-09-01&page=1&size=10'],
    ['start not a real day', '/business-data/surveys?start=2024-02-30&end=2024-03-01&page=1&size=10'],
    ['start after end', '/business-data/accounts?start=2024-09-02&end=2024-09-01&page=1&size=10'],
    ['page 0', '/business-data/accounts?start=2024-09-01&end=2024-09-01&page=0&size=10'],
    ['page not a number', '/business-data/surveys?start=2024-09-01&end=2024-09-01&page=one&size=10'],
    ['size 0', '/business-data/accounts?start=2024-09-01&end=2024-09-01&page=1&size=0'],
    ['size above the maximum', '/business-data/accounts?start=2024-09-01&end=2024-09-01&page=1&size=501'],
    ['size missing', '/business-data/surveys?start=2024-09-01&end=2024-09-01&page=1'],
    ['postings without phone or email', '/accounts/loyalty/postings?pageSize=10&pageNumber=1'],
    ['postings without pageSize', '/accounts/loyalty/postings?phone=306900000000&pageNumber=1'],
    ['account without phone or email', '/accounts?includeLoyalty=true'],
    ['includeLoyalty neither true nor false', '/accounts?phone=306900000000&includeLoyalty=yes'],
    ['search without businessFieldsRequired', '/accounts/search?page=1&size=10'],
    ['profile id not an integer', '/accounts/profiles/abc'],
    ['truth with a bad day', '/_emulator/truth/accounts?start=yesterday&end=2024-09-01'],
  ] as const;

  it.each(badRequests)('400 for %s', async (_, path) => {
    const { status, body } = await call(emulator, path);
    expect(status).toBe(400);
    expect(body.code).toBe(400);
    expect(typeof body.message).toBe('string');
  });

  it('accepts the largest page size', async () => {
    const { status } = await call(emulator, '/business-data/accounts?start=2024-09-01&end=2024-09-01&page=1&size=500');
    expect(status).toBe(200);
  });

  it('404 with code 404 for an unknown path, 405 for a known path with another method', async () => {
    expect(await call(emulator, '/business-data/orders')).toEqual({
      status: 404,
      body: { code: 404, message: 'Not Found' },
    });
    expect((await call(emulator, '/business-data/accounts', { method: 'POST' })).status).toBe(405);
  });

  it('1010 (HTTP 400) when a required one-of field is missing', async () => {
    expect(await call(emulator, '/accounts/vouchers/get')).toEqual({
      status: 400,
      body: { code: 1010, message: 'At least one of the following fields is required: phone, email' },
    });
    const integration = await call(emulator, '/accounts/integrations', { method: 'POST', body: JSON.stringify({}) });
    expect(integration.status).toBe(400);
    expect(integration.body.code).toBe(1010);
  });

  it('1005 (HTTP 404) for an unknown customer', async () => {
    expect(await call(emulator, '/accounts?phone=306999999999&includeLoyalty=false')).toEqual({
      status: 404,
      body: { code: 1005, message: 'Data Not Found' },
    });
  });

  describe('with auth configured', () => {
    let secured: Emulator;
    beforeAll(async () => {
      secured = await start({ auth: { header: 'X-Api-Key', value: 's3cret' } });
    });
    afterAll(() => secured.close());

    it('401 without the header, with a wrong value, on every path', async () => {
      for (const path of [
        '/business-data/accounts?start=2024-09-01&end=2024-09-01&page=1&size=10',
        `/accounts?phone=${phone}`,
        '/nowhere',
        '/_emulator/stats',
      ]) {
        expect(await call(secured, path)).toEqual({ status: 401, body: { code: 401, message: 'Not authorized' } });
        expect((await call(secured, path, { headers: { 'X-Api-Key': 'wrong' } })).status).toBe(401);
      }
    });

    it('serves a request with the right header (any case of its name)', async () => {
      const ok = await call(secured, '/business-data/accounts?start=2024-09-01&end=2024-09-01&page=1&size=10', {
        headers: { 'x-api-key': 's3cret' },
      });
      expect(ok.status).toBe(200);
      expect(ok.body.totalCount).toBeGreaterThan(0);
    });

    it('does not reveal the secret in its info', async () => {
      const { body } = await call(secured, '/_emulator/info', { headers: { 'X-Api-Key': 's3cret' } });
      expect(JSON.stringify(body)).not.toContain('s3cret');
      expect(body.auth).toEqual({ header: 'X-Api-Key' });
    });
  });
});
