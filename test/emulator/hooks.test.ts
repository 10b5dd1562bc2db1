import { describe, expect, it } from 'vitest';
import type { Middleware } from '../../src/emulator/index.js';
import { call, start } from './emulator-fixture.js';

const WINDOW = '/business-data/accounts?start=2024-09-01&end=2024-09-05&page=1&size=1000';

describe('seams for a fault layer', () => {
  it('runs middleware after auth and lets it answer instead of the routes', async () => {
    const seen: number[] = [];
    const unavailableOnce: Middleware = async (request, next) => {
      seen.push(request.sequence);
      if (request.sequence === 2) return { status: 503, headers: { 'retry-after': '1' }, body: '{"code":503}' };
      return next(request);
    };
    const emulator = await start({
      auth: { header: 'authorization', value: 'Bearer t' },
      hooks: { middleware: [unavailableOnce] },
    });
    try {
      const headers = { authorization: 'Bearer t' };
      expect((await call(emulator, WINDOW)).status).toBe(401); // request 1 stops at auth
      const retry = await fetch(`${emulator.url}${WINDOW}`, { headers });
      expect(retry.status).toBe(503);
      expect(retry.headers.get('retry-after')).toBe('1');
      expect((await call(emulator, WINDOW, { headers })).status).toBe(200);
      expect(seen).toEqual([2, 3]);
      expect(emulator.stats.requests()).toBe(3);
    } finally {
      await emulator.close();
    }
  });

  it('cuts the connection when a streamed body fails midway', async () => {
    const cut: Middleware = async (request, next) => {
      const response = await next(request);
      const whole = String(response.body);
      async function* half(): AsyncGenerator<string> {
        yield whole.slice(0, whole.length / 2);
        throw new Error('cut');
      }
      return {
        ...response,
        headers: { ...response.headers, 'content-length': String(Buffer.byteLength(whole)) },
        body: half(),
      };
    };
    const emulator = await start({ hooks: { middleware: [cut] } });
    try {
      await expect(fetch(`${emulator.url}${WINDOW}`).then((r) => r.text())).rejects.toThrow();
    } finally {
      await emulator.close();
    }
  });

  it('lets a data view change what a window holds between page reads', async () => {
    const emulator = await start({
      hooks: {
        dataView: (view, { request }) => {
          if (request.query.get('page') === '1') return view;
          // From page 2 on, one record was "added" in front: everything shifts by one.
          const extra = { customerId: 'C999999' };
          return {
            totalCount: view.totalCount + 1,
            records: (from, to) => [extra, ...view.records(0, view.totalCount)].slice(from, to),
          };
        },
      },
    });
    try {
      const path = (page: number) => `/business-data/accounts?start=2024-09-01&end=2024-09-30&page=${page}&size=10`;
      const first = (await call(emulator, path(1))).body;
      const second = (await call(emulator, path(2))).body;
      expect(second.totalCount).toBe(first.totalCount + 1);
      expect(second.data[0]).toEqual(first.data[9]); // the shift a client must detect through totalCount
    } finally {
      await emulator.close();
    }
  });
});
