import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { faultOptions } from '../../src/commands/emulator.js';
import { type Emulator, type ExportPageView, driftedView, resolveFaults } from '../../src/emulator/index.js';
import { call, start } from './emulator-fixture.js';

const page = (n: number, size = 5) => `/business-data/accounts?start=2024-09-01&end=2024-09-20&page=${n}&size=${size}`;

/** Status (or 'cut' for a body that does not arrive whole, 'unparsable' for one that is not JSON) of each GET. */
async function outcomes(emulator: Emulator, paths: string[]): Promise<Array<number | 'cut' | 'unparsable'>> {
  const seen: Array<number | 'cut' | 'unparsable'> = [];
  for (const path of paths) {
    let response: Response;
    let text: string;
    try {
      response = await fetch(`${emulator.url}${path}`);
      text = await response.text();
    } catch {
      seen.push('cut');
      continue;
    }
    try {
      JSON.parse(text);
      seen.push(response.status);
    } catch {
      seen.push(response.status === 200 ? 'unparsable' : response.status);
    }
  }
  return seen;
}

const MIX = {
  serverErrorRate: 0.1,
  tooManyRequestsRate: 0.05,
  cutBodyRate: 0.05,
  errorBodyRate: 0.05,
  retryAfterSeconds: 0,
};
const PATHS = Array.from({ length: 600 }, (_, i) => page(1 + (i % 40)));

describe('fault knobs', () => {
  let emulator: Emulator;
  beforeAll(async () => {
    emulator = await start({ faults: MIX });
  });
  afterAll(async () => emulator.close());

  it('answers each share of requests with its fault, counted, and the rest normally', async () => {
    emulator.faults.set(MIX);
    const seen = await outcomes(emulator, PATHS);
    const share = (pred: (o: (typeof seen)[number]) => boolean) => seen.filter(pred).length / seen.length;
    const counts = emulator.faults.counts();
    expect(counts.requests).toBe(PATHS.length);
    expect(share((o) => o === 500 || o === 502 || o === 503)).toBeCloseTo(counts.serverErrors / PATHS.length, 5);
    expect(counts.serverErrors / PATHS.length).toBeGreaterThan(0.06);
    expect(counts.serverErrors / PATHS.length).toBeLessThan(0.14);
    expect(share((o) => o === 429)).toBe(counts.tooManyRequests / PATHS.length);
    expect(counts.tooManyRequests).toBeGreaterThan(10);
    expect(share((o) => o === 'cut' || o === 'unparsable')).toBe(counts.cutBodies / PATHS.length);
    expect(seen).toContain('cut'); // connection reset mid-body
    expect(seen).toContain('unparsable'); // a short, cleanly ended body
    expect(counts.errorBodies).toBeGreaterThan(10);
    expect(share((o) => o === 200)).toBeGreaterThan(0.65);
  });

  it('draws the same faults for the same requests, and others for another fault seed', async () => {
    emulator.faults.set(MIX);
    const first = await outcomes(emulator, PATHS.slice(0, 120));
    emulator.faults.set(MIX);
    expect(await outcomes(emulator, PATHS.slice(0, 120))).toEqual(first);
    emulator.faults.set({ ...MIX, seed: 99 });
    expect(await outcomes(emulator, PATHS.slice(0, 120))).not.toEqual(first);
  });

  it('sends Retry-After with 429, an HTML page with 502, and a 1xxx error body with HTTP 200', async () => {
    emulator.faults.set({ tooManyRequestsRate: 1, retryAfterSeconds: 7 });
    const limited = await fetch(`${emulator.url}${page(1)}`);
    expect(limited.status).toBe(429);
    expect(limited.headers.get('retry-after')).toBe('7');

    emulator.faults.set({ errorBodyRate: 1, errorBodyCode: 1010 });
    expect(await call(emulator, page(1))).toEqual({
      status: 200,
      body: { code: 1010, message: expect.stringContaining('At least one') },
    });

    emulator.faults.set({ serverErrorRate: 1 });
    const statuses = new Set<number>();
    for (let n = 1; n <= 30; n++) {
      const response = await fetch(`${emulator.url}${page(n)}`);
      statuses.add(response.status);
      if (response.status === 502) expect(await response.text()).toMatch(/^<html>/);
      else await response.text();
    }
    expect([...statuses].sort()).toEqual([500, 502, 503]);
  });

  it('never answers a hung request, until the client gives up', async () => {
    emulator.faults.set({ hangRate: 1 });
    await expect(fetch(`${emulator.url}${page(1)}`, { signal: AbortSignal.timeout(150) })).rejects.toThrow();
    expect(emulator.faults.counts().hangs).toBe(1);
  });

  it('delays answers by the latency', async () => {
    emulator.faults.set({ latencyMs: 80, jitterMs: 20 });
    const started = performance.now();
    expect((await call(emulator, page(1))).status).toBe(200);
    expect(performance.now() - started).toBeGreaterThanOrEqual(79);
  });

  it('goes down after N requests and stays down until the faults change', async () => {
    emulator.faults.set({ downAfter: 2 });
    expect(await outcomes(emulator, [page(1), page(2), page(3), page(1), page(2)])).toEqual([200, 200, 503, 503, 503]);
    emulator.faults.set({});
    expect((await call(emulator, page(1))).status).toBe(200);
  });

  it("leaves the emulator's own endpoints alone", async () => {
    emulator.faults.set({ hangRate: 1 });
    const info = await call(emulator, '/_emulator/info');
    expect(info.status).toBe(200);
    expect(info.body.faults).toMatchObject({ hangRate: 1, serverErrorRate: 0 }); // the faults in force
    emulator.faults.set({});
  });
});

describe('drift', () => {
  let emulator: Emulator;
  beforeAll(async () => {
    emulator = await start({ faults: { driftRate: 1 } });
  });
  afterAll(async () => emulator.close());

  it('shows the first read of a later page a changed window, then the settled one again; the truth is the settled window', async () => {
    emulator.faults.set({ driftRate: 1 });
    const settled = await call(emulator, page(2, 20)); // page 2 read first: this read is the changed one
    const again = await call(emulator, page(2, 20));
    const first = await call(emulator, page(1, 20));
    expect(emulator.faults.counts().driftedReads).toBe(1);
    expect(again.body.totalCount).toBe(first.body.totalCount);
    expect(settled.body).not.toEqual(again.body);
    const ids = (body: { data: Array<{ customerId: string }> }) => body.data.map((r) => r.customerId);
    // one record in front of the page appeared, vanished or moved: the page is shifted by one either way
    const shiftedBack = ids(settled.body).slice(0, 19).join() === ids(again.body).slice(1).join();
    const shiftedForward =
      ids(settled.body)[0] === ids(first.body)[19] &&
      ids(settled.body).slice(1).join() === ids(again.body).slice(0, 19).join();
    expect(shiftedBack || shiftedForward).toBe(true);
    const truth = [...emulator.truth.accounts('2024-09-01', '2024-09-20')].map((a) => a.customer_id);
    expect(truth.slice(0, 40)).toEqual([...ids(first.body), ...ids(again.body)]);
  });

  it('drifts the same listings the same way for the same fault seed, and as many reads as asked', async () => {
    const changedReads = async (faults: object) => {
      emulator.faults.set(faults);
      const bodies = [];
      for (let n = 0; n < 4; n++) bodies.push((await call(emulator, page(3, 10))).body);
      return { bodies, drifted: emulator.faults.counts().driftedReads };
    };
    const a = await changedReads({ driftRate: 1, driftReads: 2 });
    const b = await changedReads({ driftRate: 1, driftReads: 2 });
    expect(a).toEqual(b);
    expect(a.drifted).toBe(2);
    expect(a.bodies[2]).toEqual(a.bodies[3]);
    expect((await changedReads({ driftRate: 0 })).drifted).toBe(0);
  });

  it("changes a customer's postings between page reads too", async () => {
    emulator.faults.set({ driftRate: 1 });
    const long = [...emulator.truth.customers('2024-11-15')][93]!; // (index + seed % 100) % 100 === 0: a long history
    const who = long.phone ? `phone=${long.phone}` : `email=${encodeURIComponent(long.email!)}`;
    const path = (n: number) => `/accounts/loyalty/postings?${who}&pageSize=50&pageNumber=${n}`;
    const first = await call(emulator, path(1));
    expect(first.body.totalCount).toBeGreaterThan(300);
    const changed = await call(emulator, path(2));
    const settled = await call(emulator, path(2));
    expect(emulator.faults.counts().driftedReads).toBe(1);
    expect(settled.body.totalCount).toBe(first.body.totalCount);
    expect(Math.abs(changed.body.totalCount - settled.body.totalCount)).toBe(1); // postings only gain or lose one
  });
});

describe('drifted views', () => {
  const base: ExportPageView = { totalCount: 6, records: (from, to) => ['a', 'b', 'c', 'd', 'e', 'f'].slice(from, to) };
  const all = (view: ExportPageView) => view.records(0, view.totalCount);

  it('inserts, deletes and moves one record', () => {
    expect(all(driftedView(base, { kind: 'insert', at: 1 }))).toEqual(['a', 'b', 'b', 'c', 'd', 'e', 'f']);
    expect(all(driftedView(base, { kind: 'delete', at: 1 }))).toEqual(['a', 'c', 'd', 'e', 'f']);
    expect(all(driftedView(base, { kind: 'move', at: 1 }))).toEqual(['a', 'c', 'd', 'e', 'f', 'b']);
    expect(driftedView(base, { kind: 'move', at: 1 }).records(3, 6)).toEqual(['e', 'f', 'b']);
  });
});

describe('fault options', () => {
  it('are checked, naming the bad one', () => {
    expect(() => resolveFaults({ hangRate: 1.5 })).toThrow(/hangRate/);
    expect(() => resolveFaults({ serverErrorRate: 0.6, tooManyRequestsRate: 0.6 })).toThrow(/must not exceed 1/);
    expect(() => resolveFaults({ errorBodyCode: 1005 })).toThrow(/errorBodyCode/);
    expect(resolveFaults({}, 42)).toMatchObject({ seed: 42, serverErrorRate: 0, downAfter: null, driftReads: 1 });
  });

  it('come from the emulator command flags', () => {
    expect(
      faultOptions({
        latency: '100',
        jitter: '20',
        serverErrors: '0.1',
        tooManyRequests: '0.05',
        retryAfter: '0',
        hangs: '0.02',
        cutBodies: '0.01',
        drift: '0.3',
        downAfter: '50',
        faultSeed: '3',
      }),
    ).toEqual({
      latencyMs: 100,
      jitterMs: 20,
      serverErrorRate: 0.1,
      tooManyRequestsRate: 0.05,
      retryAfterSeconds: 0,
      hangRate: 0.02,
      cutBodyRate: 0.01,
      driftRate: 0.3,
      downAfter: 50,
      seed: 3,
    });
    expect(() => faultOptions({ hangs: 'lots' })).toThrow(/--hangs: lots is not a share/);
    expect(() => faultOptions({ serverErrors: '0.7', hangs: '0.7' })).toThrow(/fault flags: .*must not exceed 1/);
    expect(() => faultOptions({ errorBodyCode: '1005' })).toThrow(/errorBodyCode/);
  });
});
