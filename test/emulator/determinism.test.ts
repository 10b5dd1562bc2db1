import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Emulator } from '../../src/emulator/index.js';
import { LAST_DAY, start, text } from './emulator-fixture.js';

const PATHS = [
  '/business-data/accounts?start=2024-08-18&end=2024-11-15&page=1&size=1000',
  '/business-data/accounts?start=2024-10-27&end=2024-10-27&page=1&size=50',
  '/business-data/surveys?start=2024-09-01&end=2024-10-01&page=2&size=40',
  '/_emulator/truth/accounts?start=2024-08-18&end=2024-11-15',
  '/_emulator/truth/survey-responses?start=2024-08-18&end=2024-11-15',
  '/_emulator/truth/postings?start=2024-10-01&end=2024-10-31',
  '/_emulator/truth/rejects-accounts?start=2024-08-18&end=2024-11-15',
  '/accounts/profiles/1',
  '/_emulator/truth/loyalty-status',
  '/_emulator/truth/loyalty-wallets?asOf=2025-03-01T00:00:00Z',
  '/_emulator/truth/loyalty-balance-details',
  '/_emulator/truth/vouchers?asOf=2025-01-10T12:00:00Z',
];

/** The emulator's clock: loyalty and vouchers are served as of it. */
const clock = () => Date.parse('2024-11-16T08:00:00Z');

describe('determinism', () => {
  let a: Emulator;
  let b: Emulator;
  let other: Emulator;
  beforeAll(async () => {
    [a, b, other] = await Promise.all([
      start({ badRecordRate: 0.1, clock }),
      start({ badRecordRate: 0.1, clock }),
      start({ badRecordRate: 0.1, seed: 8, clock }),
    ]);
  });
  afterAll(() => Promise.all([a.close(), b.close(), other.close()]));

  it('serves byte-identical bodies for the same seed and clock', async () => {
    const customers = [...a.truth.customers(LAST_DAY)].filter((c) => c.phone).slice(0, 25);
    const paths = [
      ...PATHS,
      ...customers.flatMap((customer) => [
        `/accounts/loyalty/postings?phone=${customer.phone}&pageSize=1000&pageNumber=1`,
        `/accounts?phone=${customer.phone}&includeLoyalty=true`,
        `/accounts/vouchers/get?phone=${customer.phone}`,
      ]),
    ];
    for (const path of paths) {
      const [x, y] = await Promise.all([text(a, path), text(b, path)]);
      if (!path.includes('/postings?') && !path.includes('/vouchers/get?')) expect(x.length, path).toBeGreaterThan(50);
      expect(x, path).toBe(y);
    }
  });

  it('serves the same bodies whatever order pages are asked in', async () => {
    const path = (page: number) => `/business-data/accounts?start=2024-09-01&end=2024-09-30&page=${page}&size=10`;
    const forward = [];
    for (let page = 1; page <= 4; page++) forward.push(await text(a, path(page)));
    const backward = [];
    for (let page = 4; page >= 1; page--) backward.unshift(await text(b, path(page)));
    expect(forward).toEqual(backward);
  });

  it('serves different data for another seed', async () => {
    for (const path of PATHS.slice(0, 6)) expect(await text(other, path), path).not.toBe(await text(a, path));
  });
});
