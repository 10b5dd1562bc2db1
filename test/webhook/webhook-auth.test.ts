import { request } from 'node:http';
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import type { DestinationSettings } from '../../src/plan/job-plan.js';
import { createLogger } from '../../src/log/logger.js';
import { WarehouseEventStore } from '../../src/webhook/loyalty-event-store.js';
import { type WebhookGateOptions } from '../../src/webhook/webhook-gate.js';
import {
  startWebhookReceiver,
  type WebhookReceiver,
  type WebhookReceiverOptions,
} from '../../src/webhook/webhook-receiver.js';
import { testDestinations } from '../helpers/destinations.js';
import { withWarehouse } from '../helpers/warehouse-reader.js';
import { WebhookGateOptionError } from '../../src/webhook/webhook-errors.js';

const TZ = 'Europe/Athens';
const SECRET = 'K7q2-xV9p.Lm4_Tz8~Wb3Nc6Rd1Hf5Js0';
const PREVIOUS = '0f1e2d3c4b5a69788796a5b4c3d2e1f0';
const HEADER = 'X-Loyalty-Webhook-Secret';

let bodies = 0;
/** A minimal loyalty event, a new one (its own customer) at every call. */
function event(): string {
  bodies++;
  return JSON.stringify({
    origin: { trigger: 'LOYALTY_POINT_UPDATED', source: 'POS' },
    customer: { accountId: `C-AUTH-${bodies}` },
    entity: { cumulativeCredit: bodies },
  });
}

/** A POST with a fresh event to `path` under the receiver. */
function call(
  receiver: WebhookReceiver,
  path: string,
  headers: Record<string, string> = {},
  method = 'POST',
): Promise<Response> {
  return fetch(`${receiver.url}${path}`, {
    method,
    headers: { 'content-type': 'application/json', ...headers },
    ...(method === 'POST' ? { body: event() } : {}),
  });
}

async function storedEvents(config: DestinationSettings): Promise<number> {
  return withWarehouse(config, async (conn) =>
    Number((await conn.all<{ n: number | string }>(`SELECT COUNT(*) AS n FROM loyalty_events`))[0]!.n),
  );
}

/**
 * Sends the headers of a call that waits for "100 Continue" before its body: resolves with the answer's status,
 * and whether the receiver asked for the body at all.
 */
function callWaitingToContinue(
  receiver: WebhookReceiver,
  path: string,
): Promise<{ status: number; askedForBody: boolean }> {
  const body = event();
  return new Promise((resolve, reject) => {
    let askedForBody = false;
    const req = request(`${receiver.url}${path}`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'content-length': Buffer.byteLength(body),
        expect: '100-continue',
      },
    });
    req.on('continue', () => {
      askedForBody = true;
      req.end(body);
    });
    req.on('response', (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode!, askedForBody }));
    });
    req.on('error', reject);
    req.flushHeaders();
  });
}

describe.each(testDestinations)('who may call the loyalty webhook receiver, storing into $name', (target) => {
  async function withReceiver(
    gate: Partial<WebhookGateOptions> & Pick<WebhookGateOptions, 'secrets'>,
    fn: (receiver: WebhookReceiver, config: DestinationSettings) => Promise<void>,
    extra: Partial<WebhookReceiverOptions> = {},
  ): Promise<DestinationSettings> {
    const { config } = await target.fresh();
    const store = new WarehouseEventStore(config, { runId: 'receiver-auth', idleReleaseMs: 20 });
    await store.check(); // the table exists, so "nothing stored" is a count of 0
    const receiver = await startWebhookReceiver({ ...gate, ...extra, store, timezone: TZ });
    try {
      await fn(receiver, config);
    } finally {
      await receiver.close();
    }
    return config;
  }

  it('answers a call without the secret, with a wrong one or with it in the wrong place 401, all alike, and stores nothing', async () => {
    const config = await withReceiver({ secrets: [SECRET], secretHeader: HEADER }, async (receiver) => {
      const wrong = [
        await call(receiver, '/hooks'),
        await call(receiver, '/hooks/'),
        await call(receiver, `/hooks/${'x'.repeat(SECRET.length)}`),
        await call(receiver, `/hooks/${SECRET.slice(0, -1)}`),
        await call(receiver, `/hooks/${SECRET}x`),
        await call(receiver, `/hooks/${SECRET.toUpperCase()}`),
        await call(receiver, `/hooks/${SECRET}/more`),
        await call(receiver, `/hooks?secret=${SECRET}`),
        await call(receiver, `/${SECRET}`),
        await call(receiver, `/loyalty/hooks/${SECRET}`),
        await call(receiver, '/hooks', { [HEADER]: PREVIOUS }),
        await call(receiver, '/hooks', { authorization: SECRET }),
        await call(receiver, '/elsewhere', { [HEADER]: SECRET }),
        await call(receiver, `/hooks/${PREVIOUS}`, {}, 'GET'),
      ];
      const answers = await Promise.all(
        wrong.map(async (r) => ({ status: r.status, body: await r.text(), type: r.headers.get('content-type') })),
      );
      expect(answers).toEqual(
        wrong.map(() => ({ status: 401, body: '{"error":"unauthorized"}', type: 'application/json; charset=utf-8' })),
      );
      // The body of a refused call is never asked for.
      expect(await callWaitingToContinue(receiver, `/hooks/${PREVIOUS}`)).toEqual({ status: 401, askedForBody: false });
      expect(await callWaitingToContinue(receiver, `/hooks/${SECRET}`)).toEqual({ status: 200, askedForBody: true });
      expect(receiver.stats()).toMatchObject({ stored: 1, refused: wrong.length + 1 });
    });
    expect(await storedEvents(config)).toBe(1);
  });

  it('stores a call with the secret in the path or in the header; during a rotation, under either secret', async () => {
    const rotating = await withReceiver({ secrets: [SECRET, PREVIOUS], secretHeader: HEADER }, async (receiver) => {
      const answers = [
        await call(receiver, `/hooks/${SECRET}`),
        await call(receiver, `/hooks/${PREVIOUS}`),
        await call(receiver, '/hooks', { [HEADER]: SECRET }),
        await call(receiver, '/hooks/loyalty', { [HEADER.toLowerCase()]: PREVIOUS }),
      ];
      expect(
        await Promise.all(answers.map(async (r) => [r.status, ((await r.json()) as { status: string }).status])),
      ).toEqual(answers.map(() => [200, 'stored']));
    });
    expect(await storedEvents(rotating)).toBe(4);

    // The rotation done: the previous secret is refused.
    const after = await withReceiver({ secrets: [SECRET], secretHeader: HEADER }, async (receiver) => {
      expect((await call(receiver, `/hooks/${PREVIOUS}`)).status).toBe(401);
      expect((await call(receiver, '/hooks', { [HEADER]: PREVIOUS })).status).toBe(401);
      expect((await call(receiver, `/hooks/${SECRET}`)).status).toBe(200);
    });
    expect(await storedEvents(after)).toBe(1);

    // Without --secret-header, a header carries nothing.
    const pathOnly = await withReceiver({ secrets: [SECRET] }, async (receiver) => {
      expect((await call(receiver, '/hooks', { [HEADER]: SECRET })).status).toBe(401);
    });
    expect(await storedEvents(pathOnly)).toBe(0);
  });

  it('writes no secret, right, old or guessed, into its log lines', async () => {
    const out = new PassThrough();
    let logged = '';
    out.on('data', (chunk: Buffer) => (logged += chunk.toString('utf8')));
    const guess = 'a'.repeat(40);
    await withReceiver(
      { secrets: [SECRET], secretHeader: HEADER },
      async (receiver) => {
        expect((await call(receiver, `/hooks/${SECRET}`)).status).toBe(200);
        expect((await call(receiver, `/hooks/${PREVIOUS}?token=${guess}`)).status).toBe(401);
        expect((await call(receiver, `/${guess}`)).status).toBe(401);
        expect((await call(receiver, '/hooks', { [HEADER]: guess })).status).toBe(401);
        const invalid = await fetch(`${receiver.url}/hooks/${SECRET}`, { method: 'POST', body: '{"origin":' });
        expect(invalid.status).toBe(400);
      },
      { logger: createLogger({ level: 'debug', destination: out }) },
    );
    expect(logged).toContain('"path":"/hooks/[REDACTED]?[REDACTED]"');
    expect(logged).toContain('"reason":"no valid secret"');
    expect(logged).toContain('loyalty webhook call rejected');
    for (const secret of [SECRET, PREVIOUS, guess, encodeURIComponent(SECRET)]) expect(logged).not.toContain(secret);
  });

  it('refuses to start without a secret unless calls are authenticated in front of it, or with a weak secret', async () => {
    const { config } = await target.fresh();
    const store = new WarehouseEventStore(config, { runId: 'never' });
    await expect(startWebhookReceiver({ store, timezone: TZ, secrets: [] })).rejects.toThrow(WebhookGateOptionError);
    await expect(startWebhookReceiver({ store, timezone: TZ, secrets: ['hunter2-hunter2'] })).rejects.toThrow(
      /at least 32/,
    );
    await expect(startWebhookReceiver({ store, timezone: TZ, secrets: [`${SECRET}/`] })).rejects.toThrow(
      /only the characters/,
    );
    await expect(
      startWebhookReceiver({ store, timezone: TZ, secrets: [SECRET], secretHeader: 'X Secret' }),
    ).rejects.toThrow(WebhookGateOptionError);

    const upstream = await withReceiver({ secrets: [], authenticatedUpstream: true }, async (receiver) => {
      expect((await call(receiver, '/hooks')).status).toBe(200);
      expect((await call(receiver, '/hooks/loyalty')).status).toBe(200);
      expect((await call(receiver, '/elsewhere')).status).toBe(404);
    });
    expect(await storedEvents(upstream)).toBe(2);
  });

  it('caps calls per source address: past the cap 429 with Retry-After and nothing more stored; X-Forwarded-For counts only from a trusted proxy', async () => {
    const cap = { calls: 3, perSeconds: 3600 }; // a window no test outlasts, so the count never resets midway
    const direct = await withReceiver({ secrets: [SECRET], rateLimit: cap }, async (receiver) => {
      // A forwarded-for header from a peer that is no trusted proxy changes nothing: all of these are 127.0.0.1.
      const answers = [];
      for (let n = 0; n < 5; n++)
        answers.push(await call(receiver, `/hooks/${SECRET}`, { 'x-forwarded-for': `198.51.100.${n}` }));
      expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 429, 429]);
      const retryAfter = Number(answers[3]!.headers.get('retry-after'));
      expect(retryAfter).toBeGreaterThanOrEqual(1);
      expect(retryAfter).toBeLessThanOrEqual(3600);
      expect(await answers[3]!.json()).toEqual({ error: 'too many calls' });
      // Wrong secrets count too, so the cap also slows down guessing.
      expect((await call(receiver, '/hooks/wrong')).status).toBe(429);
      expect((await fetch(`${receiver.url}/health`)).status).toBe(200);
      expect(receiver.stats()).toMatchObject({ stored: 3, limited: 3 });
    });
    expect(await storedEvents(direct)).toBe(3);

    const proxied = await withReceiver(
      { secrets: [SECRET], rateLimit: cap, trustedProxies: ['loopback'] },
      async (receiver) => {
        const from = (client: string) => call(receiver, `/hooks/${SECRET}`, { 'x-forwarded-for': client });
        const statuses = async (client: string, n: number) => {
          const out = [];
          for (let i = 0; i < n; i++) out.push((await from(client)).status);
          return out;
        };
        expect(await statuses('198.51.100.7', 4)).toEqual([200, 200, 200, 429]);
        expect(await statuses('203.0.113.9', 1)).toEqual([200]); // another caller has a cap of its own
        // One IPv6 host commonly holds a /64: its addresses share one cap.
        expect(await statuses('2001:db8:1:2::1', 2)).toEqual([200, 200]);
        expect(await statuses('2001:db8:1:2:ffff::9', 2)).toEqual([200, 429]);
        expect(await statuses('2001:db8:1:3::1', 1)).toEqual([200]);
      },
    );
    expect(await storedEvents(proxied)).toBe(3 + 1 + 3 + 1);
  });

  it('lets in only allowed source addresses, believing X-Forwarded-For only from a trusted proxy', async () => {
    const allowFrom = ['203.0.113.0/24', '2001:db8::/32'];
    const unproxied = await withReceiver({ secrets: [SECRET], allowFrom }, async (receiver) => {
      // the peer is 127.0.0.1, whatever the header claims
      expect((await call(receiver, `/hooks/${SECRET}`, { 'x-forwarded-for': '203.0.113.5' })).status).toBe(401);
    });
    expect(await storedEvents(unproxied)).toBe(0);

    const proxied = await withReceiver(
      { secrets: [SECRET], allowFrom, trustedProxies: ['127.0.0.1', '::1'] },
      async (receiver) => {
        const from = async (forwardedFor: string) =>
          (await call(receiver, `/hooks/${SECRET}`, { 'x-forwarded-for': forwardedFor })).status;
        expect(await from('203.0.113.5')).toBe(200);
        expect(await from('2001:db8:ab::5')).toBe(200);
        expect(await from('198.51.100.7')).toBe(401);
        // A caller's own X-Forwarded-For entry comes first; the proxy appends the address it saw, which decides.
        expect(await from('203.0.113.5, 198.51.100.7')).toBe(401);
        expect(await from('198.51.100.7, 203.0.113.5')).toBe(200);
        expect(await from('not-an-address')).toBe(401);
      },
    );
    expect(await storedEvents(proxied)).toBe(3);

    const local = await withReceiver({ secrets: [SECRET], allowFrom: ['127.0.0.0/8', '::1'] }, async (receiver) => {
      expect((await call(receiver, `/hooks/${SECRET}`)).status).toBe(200);
    });
    expect(await storedEvents(local)).toBe(1);

    const { config } = await target.fresh();
    const store = new WarehouseEventStore(config, { runId: 'never' });
    for (const bad of ['10.0.0.0/33', 'example.com', '2001:db8::/129']) {
      await expect(startWebhookReceiver({ store, timezone: TZ, secrets: [SECRET], allowFrom: [bad] })).rejects.toThrow(
        WebhookGateOptionError,
      );
    }
  });
});
