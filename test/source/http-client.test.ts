import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Emulator, type EmulatorResponse, type Middleware, startEmulator } from '../../src/emulator/index.js';
import { silentLogger } from '../../src/log/logger.js';
import { registerSecret } from '../../src/log/redact.js';
import { HttpClient, type HttpClientOptions } from '../../src/source/http-client.js';
import { LoyaltyApi } from '../../src/source/loyalty-api.js';
import { DataNotFoundError, FatalSourceError, RetriableSourceError } from '../../src/source/source-errors.js';

const DATASET = { seed: 7, accounts: 200, endDate: '2024-11-15' } as const;
const WINDOW = { start: '2024-09-01', end: '2024-09-05' };
const QUERY = { ...WINDOW, page: 1, size: 20 };
const PATH = '/business-data/accounts';

type Scripted = 'pass' | 'hang' | 'reset' | 'short' | EmulatorResponse;

/** Middleware answering source requests from a script, one entry per request, then passing them through. */
function script(entries: Scripted[]): Middleware {
  const queue = [...entries];
  return async (request, next) => {
    const entry = queue.shift() ?? 'pass';
    if (entry === 'pass') return next(request);
    if (entry === 'hang') {
      await new Promise((resolve) => request.signal.addEventListener('abort', resolve, { once: true }));
      throw new Error('gone');
    }
    if (entry === 'reset' || entry === 'short') {
      const whole = String((await next(request)).body);
      const part = whole.slice(0, whole.length / 2);
      if (entry === 'short') return { status: 200, headers: { 'content-type': 'application/json' }, body: part };
      return {
        status: 200,
        headers: { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(whole)) },
        body: (async function* () {
          yield part;
          throw new Error('reset');
        })(),
      };
    }
    return entry;
  };
}

const answer = (status: number, body: unknown, headers: Record<string, string> = {}): EmulatorResponse => ({
  status,
  headers: { 'content-type': 'application/json', ...headers },
  body: typeof body === 'string' ? body : JSON.stringify(body),
});

describe('HttpClient against the emulator', () => {
  let emulator: Emulator;
  let middleware: Middleware = (request, next) => next(request);
  beforeAll(async () => {
    emulator = await startEmulator({
      ...DATASET,
      auth: { header: 'X-Api-Key', value: 'k3y-"quoted"\\value' },
      hooks: { middleware: [(request, next) => middleware(request, next)] },
    });
  });
  afterAll(async () => emulator.close());

  function client(options: Partial<HttpClientOptions> = {}): { http: HttpClient; waits: number[] } {
    const waits: number[] = [];
    emulator.stats.reset();
    emulator.faults.set({});
    const http = new HttpClient({
      baseUrl: emulator.url,
      auth: { header: 'X-Api-Key', value: 'k3y-"quoted"\\value' },
      timeoutMs: 300,
      retries: 6,
      requestsPerSecond: 1000,
      concurrency: 4,
      logger: silentLogger,
      backoffBaseMs: 40,
      backoffMaxMs: 100,
      sleep: async (ms) => void waits.push(ms),
      ...options,
    });
    return { http, waits };
  }

  it('retries 5xx, a 502 proxy page, a reset connection, a short body, a hang and an empty body, with growing jittered backoff', async () => {
    middleware = script([
      answer(503, { code: 503, message: 'Service Unavailable' }),
      answer(502, '<html>Bad Gateway</html>'),
      'reset',
      'short',
      'hang',
      answer(200, ''),
    ]);
    const { http, waits } = client();
    const counter = { requests: 0 };
    const body = (await http.get(PATH, QUERY, 'accounts', counter)) as { totalCount: number; data: unknown[] };
    expect(body.totalCount).toBeGreaterThan(0);
    expect(body.data.length).toBe(Math.min(20, body.totalCount));
    expect(emulator.stats.requests(PATH)).toBe(7);
    expect(http.requestCount).toBe(7);
    expect(counter.requests).toBe(7);
    expect(waits).toHaveLength(6);
    waits.forEach((wait, k) => {
      expect(wait).toBeGreaterThanOrEqual(0);
      expect(wait).toBeLessThan(Math.min(100, 40 * 2 ** k));
    });
  });

  it('gives up after the configured retries with a retriable error that says so', async () => {
    emulator.faults.set({ serverErrorRate: 1 });
    middleware = (request, next) => next(request);
    const { http } = client({ retries: 2 });
    emulator.faults.set({ serverErrorRate: 1 });
    const failure = await http.get(PATH, QUERY, 'accounts 2024-09-01..2024-09-05 page 1').catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(RetriableSourceError);
    expect((failure as Error).message).toMatch(
      /^accounts 2024-09-01\.\.2024-09-05 page 1: HTTP 50[023].* \(gave up after 3 attempts\)$/,
    );
    expect(emulator.stats.requests(PATH)).toBe(3);
  });

  it("waits as long as Retry-After says, and holds every caller's requests meanwhile", async () => {
    const arrivals: Array<{ at: number; page: string | null }> = [];
    let refused!: () => void;
    const refusal = new Promise<void>((resolve) => (refused = resolve));
    middleware = async (request, next) => {
      arrivals.push({ at: performance.now(), page: request.query.get('page') });
      if (arrivals.length > 1) return next(request);
      setImmediate(refused);
      return answer(429, { code: 429, message: 'Too Many Requests' }, { 'retry-after': '1' });
    };
    const { http, waits } = client();
    const first = http.get(PATH, { ...QUERY, page: 1 });
    await refusal;
    await new Promise((r) => setTimeout(r, 20));
    await Promise.all([first, http.get(PATH, { ...QUERY, page: 2 })]);
    expect(waits).toEqual([1000]);
    const [refusedAt, ...later] = arrivals;
    expect(later.map((a) => a.page).sort()).toEqual(['1', '2']);
    for (const a of later) expect(a.at - refusedAt!.at).toBeGreaterThanOrEqual(950); // the other caller waited too
  });

  it('does not retry a request the source calls wrong (4xx), nor a 1xxx error body, nor a redirect', async () => {
    middleware = (request, next) => next(request);
    const { http } = client();
    await expect(http.get(PATH, { ...QUERY, size: 5000 })).rejects.toThrow(FatalSourceError);
    await expect(http.get('/nowhere', {})).rejects.toThrow(/HTTP 404/);
    expect(emulator.stats.requests()).toBe(2);

    emulator.faults.set({ errorBodyRate: 1, errorBodyCode: 1006 });
    const failure = await http.get(PATH, QUERY, 'accounts page 1').catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(FatalSourceError);
    expect((failure as Error).message).toMatch(
      /^accounts page 1: 1006 The following fields are invalid: start \(HTTP 200\)$/,
    );
    emulator.faults.set({});

    middleware = script([answer(302, '', { location: 'http://elsewhere.example/steal' })]);
    await expect(http.get(PATH, QUERY)).rejects.toThrow(/HTTP 302 redirect, not followed/);
  });

  it('tells a customer without postings (1005) apart from a failure', async () => {
    middleware = (request, next) => next(request);
    const { http } = client();
    await expect(http.get('/accounts/loyalty/postings', { phone: '000', pageNumber: 1, pageSize: 10 })).rejects.toThrow(
      DataNotFoundError,
    );
    expect(emulator.stats.requests()).toBe(1);
  });

  it('says 401 is about credentials, without repeating them', async () => {
    const { http } = client({ auth: { header: 'X-Api-Key', value: 'wrong-key-value' } });
    const failure = (await http.get(PATH, QUERY).catch((e: unknown) => e)) as FatalSourceError;
    expect(failure).toBeInstanceOf(FatalSourceError);
    expect(failure.message).toMatch(/HTTP 401 not authorized \(check source.auth and LOYALTY_API_TOKEN\)/);
    expect(failure.message).not.toContain('wrong-key-value');
  });

  it('keeps a registered secret out of its messages even when the source echoes it, and refuses a header value HTTP cannot carry', async () => {
    const secret = 'k3y-"quoted"\\value';
    registerSecret(secret);
    middleware = script([
      answer(400, { code: 1006, message: `The following fields are invalid: X-Api-Key=${secret} ${'x'.repeat(300)}` }),
    ]);
    const { http } = client();
    const failure = (await http.get(PATH, QUERY).catch((e: unknown) => e)) as Error;
    expect(failure.message).toContain('[REDACTED]');
    expect(failure.message).not.toContain('k3y');
    expect(() => client({ auth: { header: 'X-Api-Key', value: 'line\nbreak-secret' } })).toThrow(
      /holds characters no HTTP header can carry/,
    );
    expect(() => client({ auth: { header: 'X-Api-Key', value: 'line\nbreak-secret' } })).not.toThrow(/break-secret/);
  });

  it('stops reading an answer past source.max_response_bytes and fails it unretried, whether its length is declared or not', async () => {
    const megabyte = `[${'1,'.repeat(512 * 1024 - 1)}1]`;
    middleware = async () => ({
      status: 200,
      headers: { 'content-type': 'application/json' },
      // an answer without end: only a reader that stops at the cap ever returns
      body: (async function* () {
        yield '{"data":[';
        for (;;) yield `${megabyte},`;
      })(),
    });
    const { http } = client({ maxResponseBytes: 2 * 1024 * 1024, timeoutMs: 60_000 });
    const endless = await http.get(PATH, QUERY, 'accounts page 1').catch((e: unknown) => e);
    expect(endless).toBeInstanceOf(FatalSourceError);
    expect((endless as Error).message).toMatch(
      /^accounts page 1: the answer is larger than 2097152 bytes \(source\.max_response_bytes\)/,
    );
    expect(emulator.stats.requests(PATH)).toBe(1);

    middleware = async () => answer(200, `{"data":[${megabyte},${megabyte}]}`);
    const { http: declared } = client({ maxResponseBytes: 1024 * 1024 });
    const large = await declared.get(PATH, QUERY, 'accounts page 1').catch((e: unknown) => e);
    expect(large).toBeInstanceOf(FatalSourceError);
    expect(emulator.stats.requests(PATH)).toBe(1);
  });

  it('retries a connection that cannot be made, then gives up', async () => {
    const gone = await startEmulator(DATASET);
    const url = gone.url;
    await gone.close();
    const { http } = client({ baseUrl: url, retries: 1 });
    const failure = (await http.get(PATH, QUERY, 'accounts page 1').catch((e: unknown) => e)) as Error;
    expect(failure).toBeInstanceOf(RetriableSourceError);
    expect(failure.message).toMatch(/^accounts page 1: connection failed: .*\(gave up after 2 attempts\)$/);
  });

  it('keeps at most `concurrency` requests in flight, whoever sends them', async () => {
    let inFlight = 0;
    let most = 0;
    middleware = async (request, next) => {
      most = Math.max(most, ++inFlight);
      await new Promise((r) => setTimeout(r, 20));
      inFlight--;
      return next(request);
    };
    const { http } = client({ concurrency: 3 });
    const api = new LoyaltyApi(http);
    await Promise.all([
      ...Array.from({ length: 8 }, (_, n) => http.get(PATH, { ...QUERY, page: n + 1 })),
      ...Array.from({ length: 4 }, (_, n) => api.scoped().accountsPage(WINDOW, n + 1, 20)),
    ]);
    expect(most).toBe(3);
  });

  it('calls off the requests of failed work: queued ones never leave, one in flight or waiting to retry stops at once', async () => {
    middleware = script(['hang', 'hang']);
    const { http } = client({
      concurrency: 1,
      timeoutMs: 30_000,
      sleep: (ms) => new Promise((r) => setTimeout(r, ms)),
    });
    const api = new LoyaltyApi(http);
    const calls = [1, 2, 3].map((page) => api.accountsPage(WINDOW, page, 20));
    await new Promise((r) => setTimeout(r, 100));
    const started = performance.now();
    api.cancel('its window failed');
    const outcomes = await Promise.allSettled(calls);
    expect(performance.now() - started).toBeLessThan(5_000);
    for (const o of outcomes) expect(o.status === 'rejected' && (o.reason as Error).name).toBe('CancelledRequestError');
    expect(api.counter.requests).toBe(1);
    expect(emulator.stats.requests(PATH)).toBe(1);
  });
});

describe('LoyaltyApi envelopes', () => {
  let emulator: Emulator;
  let body: unknown;
  beforeAll(async () => {
    emulator = await startEmulator({ ...DATASET, hooks: { middleware: [async () => answer(200, body)] } });
  });
  afterAll(async () => emulator.close());

  const api = () =>
    new LoyaltyApi(
      new HttpClient({
        baseUrl: emulator.url,
        timeoutMs: 1000,
        retries: 0,
        requestsPerSecond: 1000,
        concurrency: 2,
        logger: silentLogger,
      }),
    );

  it('names the endpoint, the window and the page when the envelope is wrong', async () => {
    body = { pageNumber: 1, pageSize: 20, totalCount: null, data: [] };
    await expect(api().accountsPage(WINDOW, 1, 20)).rejects.toThrow(
      "accounts 2024-09-01..2024-09-05 page 1: unexpected response shape at 'totalCount'",
    );
    body = { pageNumber: 2, pageSize: 20, totalCount: 5 };
    await expect(api().surveysPage(WINDOW, 2, 20)).rejects.toThrow(
      "surveys 2024-09-01..2024-09-05 page 2: unexpected response shape at 'data'",
    );
    body = { pageNumber: 3, pageSize: 20, totalCount: 100, data: [] };
    await expect(api().accountsPage(WINDOW, 1, 20)).rejects.toThrow(
      'accounts 2024-09-01..2024-09-05 page 1: the source answered page 3',
    );
  });

  it('says so when the source serves smaller pages than asked, and accepts numbers sent as digits', async () => {
    body = { pageNumber: 1, pageSize: 10, totalCount: 45, data: Array.from({ length: 10 }, () => ({})) };
    await expect(api().accountsPage(WINDOW, 1, 20)).rejects.toThrow(
      'the source serves pages of 10 records, not the 20 asked for (set source.page_size to at most 10)',
    );
    body = { pageNumber: '1', pageSize: '20', totalCount: '3', data: [{}, {}, {}] };
    await expect(api().accountsPage(WINDOW, 1, 20)).resolves.toEqual({
      pageNumber: 1,
      pageSize: 20,
      totalCount: 3,
      data: [{}, {}, {}],
    });
  });
});
