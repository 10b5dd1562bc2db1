import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator, type Emulator, type TruthCustomer } from '../../src/emulator/index.js';
import { canonicalJson } from '../../src/transform/keys.js';
import type { LoyaltyEvent } from '../../src/webhook/loyalty-event.js';
import { type EventStore, WarehouseEventStore } from '../../src/webhook/loyalty-event-store.js';
import { startWebhookReceiver } from '../../src/webhook/webhook-receiver.js';
import { testDestinations } from '../helpers/destinations.js';
import { withWarehouse } from '../helpers/warehouse-reader.js';
import { saleBody } from '../helpers/sales.js';

const TZ = 'Europe/Athens';
const NOW = Date.parse('2024-03-21T08:00:00Z');
/** The receiver's secret, in the subscriber address the way the service's support registers it. */
const SECRET = 'e2f1c0b9a8d7e6f5a4b3c2d1e0f9a8b7';
const hookOf = (receiver: { url: string }) => `${receiver.url}/hooks/${SECRET}`;

/** A sale of `paid` by the customer with `phone`, for the emulator to turn into a webhook call. */
const sale = (phone: string, paid: number, receipt: string) => saleBody({ phone }, paid, receipt);

describe.each(testDestinations)('loyalty webhook receiver into $name', (target) => {
  let emulator: Emulator;
  let customers: TruthCustomer[];
  /** Real webhook bodies, captured from the emulator. */
  const bodies: unknown[] = [];
  beforeAll(async () => {
    emulator = await startEmulator({
      seed: 5,
      accounts: 40,
      startDate: '2024-03-01',
      endDate: '2024-03-20',
      timezone: TZ,
      clock: () => NOW,
      webhooks: { retryDelayMs: 10, maxAttempts: 4 },
    });
    customers = [...emulator.truth.customers('2024-03-20')].filter((c) => c.phone);
    const capture = await startWebhookReceiver({
      store: { save: async (e) => (bodies.push(JSON.parse(e.payload)), 'stored'), close: async () => undefined },
      timezone: TZ,
      secrets: [SECRET],
    });
    emulator.activity.subscribe(hookOf(capture));
    for (let n = 0; n < 12; n++) {
      const res = await fetch(`${emulator.url}/accounts/transactions/submit`, {
        method: 'POST',
        body: JSON.stringify(sale(customers[n % 6]!.phone!, 10 + n, `W-${n}`)),
      });
      expect(res.status).toBe(200);
    }
    await emulator.activity.settled();
    emulator.activity.unsubscribe(hookOf(capture));
    await capture.close();
    expect(bodies).toHaveLength(12);
  });
  afterAll(() => emulator.close());

  const post = (url: string, body: unknown) =>
    fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    });
  const readEvents = (conn: Parameters<Parameters<typeof withWarehouse>[1]>[0]) =>
    conn.all<{ seq: string | number; event_key: string; customer_id: string; payload: unknown; run_id: string }>(
      `SELECT seq, event_key, customer_id, CAST(payload AS VARCHAR) AS payload, _run_id AS run_id FROM loyalty_events ORDER BY seq`,
    );

  it('stores a call before answering 200, once however often it comes, numbered in commit order; refuses what is no event', async () => {
    const { config } = await target.fresh();
    const receiver = await startWebhookReceiver({
      store: new WarehouseEventStore(config, { runId: 'receiver-1', idleReleaseMs: 50 }),
      timezone: TZ,
      secrets: [SECRET],
    });
    const hook = hookOf(receiver);
    try {
      const first = await post(hook, bodies[0]);
      expect(first.status).toBe(200);
      const { eventKey } = (await first.json()) as { eventKey: string };
      // Committed before the answer: another connection sees the row at once.
      await withWarehouse(config, async (conn) =>
        expect((await readEvents(conn)).map((e) => e.event_key)).toEqual([eventKey]),
      );

      const reordered = Object.fromEntries(Object.entries(bodies[0] as object).reverse());
      expect(await (await post(hook, reordered)).json()).toEqual({ status: 'duplicate', eventKey });
      // The rest at once, each of them twice.
      const answers = await Promise.all([...bodies.slice(1), ...bodies.slice(1)].map((b) => post(hook, b)));
      expect(answers.map((a) => a.status)).toEqual(answers.map(() => 200));

      expect((await post(hook, '{"origin":')).status).toBe(400);
      const noCustomer = await post(hook, { ...(bodies[1] as object), customer: { phone: '3069' } });
      expect(noCustomer.status).toBe(400);
      expect(((await noCustomer.json()) as { error: string }).error).toContain('customer.accountId');
      expect((await post(hook, 'x'.repeat(2 << 20))).status).toBe(413);
      expect((await fetch(hook)).status).toBe(405);
      expect((await fetch(`${receiver.url}/health`)).status).toBe(200);
      expect(receiver.stats()).toEqual({
        stored: 12,
        duplicates: 12,
        invalid: 2,
        quarantined: 0,
        failed: 0,
        refused: 0,
        limited: 0,
      });
    } finally {
      await receiver.close();
    }
    await withWarehouse(config, async (conn) => {
      const events = await readEvents(conn);
      expect(events.map((e) => Number(e.seq))).toEqual(Array.from({ length: 12 }, (_, i) => i + 1));
      expect(new Set(events.map((e) => e.event_key)).size).toBe(12);
      expect(events.every((e) => e.run_id === 'receiver-1')).toBe(true);
      expect(events.map((e) => canonicalJson(JSON.parse(String(e.payload)))).sort()).toEqual(
        bodies.map((b) => canonicalJson(b)).sort(),
      );
      const [row] = await conn.all<{ n: number | string }>(
        `SELECT COUNT(DISTINCT customer_id) AS n FROM loyalty_events`,
      );
      expect(Number(row!.n)).toBe(6);
    });
  });

  it('answers 503 while the warehouse cannot take an event, and the emulator’s retries deliver it exactly once', async () => {
    const { config } = await target.fresh();
    const warehouse = new WarehouseEventStore(config, { runId: 'receiver-2', idleReleaseMs: 50 });
    let calls = 0;
    // The first call fails before storing; the second stores the event but its answer is lost (503) — the
    // case a redelivery must not duplicate; the third finds it stored.
    const flaky: EventStore = {
      save: async (event: LoyaltyEvent) => {
        calls++;
        if (calls === 1) throw new Error('warehouse down');
        const outcome = await warehouse.save(event);
        if (calls === 2) throw new Error('connection lost after commit');
        return outcome;
      },
      close: () => warehouse.close(),
    };
    const receiver = await startWebhookReceiver({
      store: flaky,
      timezone: TZ,
      retryAfterSeconds: 1,
      secrets: [SECRET],
    });
    const refused = await post(hookOf(receiver), bodies[0]);
    expect(refused.status).toBe(503);
    expect(refused.headers.get('retry-after')).toBe('1');
    emulator.activity.subscribe(hookOf(receiver));
    try {
      const before = emulator.activity.webhookStats();
      expect(
        (await post(`${emulator.url}/accounts/transactions/submit`, sale(customers[7]!.phone!, 33, 'W-RETRY'))).status,
      ).toBe(200);
      await emulator.activity.settled();
      const after = emulator.activity.webhookStats();
      expect(after.delivered - before.delivered).toBe(1);
      expect(after.attempts - before.attempts).toBe(2); // the 503 after the commit, then the redelivery
    } finally {
      emulator.activity.unsubscribe(hookOf(receiver));
      await receiver.close();
    }
    expect(receiver.stats()).toMatchObject({ stored: 0, duplicates: 1, failed: 2 });
    await withWarehouse(config, async (conn) => {
      const events = await readEvents(conn);
      expect(events.map((e) => e.customer_id)).toEqual([customers[7]!.customer_id]);
    });
  });

  it('stores a body holding NUL characters, which PostgreSQL text and jsonb cannot hold, without them', async () => {
    const { config } = await target.fresh();
    const receiver = await startWebhookReceiver({
      store: new WarehouseEventStore(config, { runId: 'receiver-3', idleReleaseMs: 50 }),
      timezone: TZ,
      secrets: [SECRET],
    });
    const body = bodies[2] as { origin: { trigger: string }; customer: { accountId: string } };
    const withNul = {
      ...body,
      origin: { ...body.origin, source: 'pos\u0000', trigger: `${body.origin.trigger}\u0000` },
      customer: { ...body.customer, accountId: `\u0000${body.customer.accountId}` },
      note: 'a\u0000b',
      ['k\u0000']: ['\u0000'],
    };
    try {
      const answer = await post(hookOf(receiver), withNul);
      expect(answer.status).toBe(200);
    } finally {
      await receiver.close();
    }
    await withWarehouse(config, async (conn) => {
      const events = await conn.all<{
        payload: unknown;
        origin_source: string;
        event_trigger: string;
        customer_id: string;
      }>(`SELECT CAST(payload AS VARCHAR) AS payload, origin_source, event_trigger, customer_id FROM loyalty_events`);
      expect(
        events.map((e) => [
          canonicalJson(JSON.parse(String(e.payload))),
          e.origin_source,
          e.event_trigger,
          e.customer_id,
        ]),
      ).toEqual([
        [
          canonicalJson({ ...body, origin: { ...body.origin, source: 'pos' }, note: 'ab', k: [''] }),
          'pos',
          body.origin.trigger,
          body.customer.accountId,
        ],
      ]);
    });
  });
});
