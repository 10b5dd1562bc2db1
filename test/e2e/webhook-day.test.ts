import { describe, expect, it, vi } from 'vitest';
import { runCommand } from '../../src/commands/run.js';
import { statusCommand } from '../../src/commands/status.js';
import type { Middleware } from '../../src/emulator/index.js';
import { eventStoreFor } from '../../src/commands/webhook.js';
import { startWebhookReceiver } from '../../src/webhook/webhook-receiver.js';
import { emulatorJobs } from '../helpers/cli.js';
import { testDestinations } from '../helpers/destinations.js';
import { readAccounts, readPostings, sortedByJson, withWarehouse } from '../helpers/warehouse-reader.js';
import { captureStdout } from '../helpers/stdout.js';
import { saleBody } from '../helpers/sales.js';
import { useEmulator } from '../helpers/suite-emulator.js';

const TZ = 'Europe/Athens';
const START = '2024-03-01';
const END = '2024-03-20';
/** The scripted day, after the seeded data. */
const DAY = '2024-03-21';
const at = (localTime: string) => Date.parse(`${DAY}T${localTime}+02:00`);
/** The receiver's secret: the emulator calls the subscriber address `/hooks/<secret>`, as the service would. */
const SECRET = '5d41402abc4b2a76b9719d911017c592';

/** A sale of `paid` with consistent totals, paid by card, closed at `closeTime` of the scripted day. */
const sale = (
  identityKey: 'account' | 'customer',
  identity: Record<string, unknown>,
  paid: number,
  receipt: string,
  closeTime: string,
) =>
  saleBody(identity, paid, receipt, {
    identityKey,
    time: `${DAY} ${closeTime}`,
    payments: [{ name: 'EUR', typeName: 'card', amount: paid }],
  });

describe.each(testDestinations)(
  'a day of activity, the loyalty webhook and the postings selection `webhook`, into $name',
  (target) => {
    let now = at('10:00:00');
    /** Customers whose postings were asked for, by the phone or e-mail of the request. */
    let asked: string[] = [];
    let failPostings = false;
    const watchPostings: Middleware = async (request, next) => {
      if (request.path === '/accounts/loyalty/postings') {
        if (failPostings) return { status: 500, headers: {}, body: '{"code":500,"message":"Internal server error"}' };
        if (request.query.get('pageNumber') === '1')
          asked.push(request.query.get('phone') ?? request.query.get('email') ?? '');
      }
      return next(request);
    };
    const emulator = useEmulator({
      seed: 31,
      accounts: 80,
      startDate: START,
      endDate: END,
      timezone: TZ,
      clock: () => now,
      hooks: { middleware: [watchPostings] },
      webhooks: { retryDelayMs: 10 },
    });

    const post = (path: string, body: unknown, method = 'POST') =>
      fetch(`${emulator.url}${path}`, {
        method,
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });

    /** Runs `loyalty-etl run --until until`, returning what it printed. */
    async function run(file: string, until: string): Promise<string> {
      const printed: string[] = [];
      const spy = vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => (printed.push(String(chunk)), true));
      try {
        await runCommand({ config: file, until });
      } finally {
        spy.mockRestore();
      }
      return printed.join('');
    }

    it('loads the new postings, the changed account and the events, asks only the customers with events, and reaches the ground truth', async () => {
      const { config } = await target.fresh();
      const file = emulatorJobs({
        url: emulator.url,
        timezone: TZ,
        firstDay: START,
        destination: config,
        streams: ['accounts', 'loyalty_postings'],
        lookbackDays: 1,
        pageSize: 50,
        postings: '    postings:\n      customers: webhook\n',
      });

      // History: the job has no bookmark yet, so its first postings span asks every known customer.
      asked = [];
      await run(file, END);
      const known = [...emulator.truth.customers(END)];
      expect(new Set(asked).size).toBe(known.length);
      await withWarehouse(config, async (conn) => {
        expect(sortedByJson(await readPostings(conn))).toEqual(
          sortedByJson([...emulator.truth.postings(START, END)].map((p) => ({ ...p }))),
        );
        expect(await conn.all(`SELECT job, stream, through_seq FROM _etl_event_bookmarks`)).toEqual([
          { job: 'nightly', stream: 'loyalty_postings', through_seq: expect.anything() },
        ]);
      });

      // The scripted day: two transactions and a purchase, a rollback of one of them, a profile change.
      // the store the webhook command uses: DuckDB's spool, which the next run ingests; PostgreSQL's table
      const receiver = await startWebhookReceiver({
        store: eventStoreFor(config, { runId: 'receiver', now: () => new Date(now) }),
        timezone: TZ,
        secrets: [SECRET],
      });
      emulator.activity.subscribe(`${receiver.url}/hooks/${SECRET}`);
      const withPhone = known.filter((c) => c.phone);
      const emailOnly = known.find((c) => !c.phone)!;
      const [a, b, d] = [withPhone[3]!, withPhone[17]!, withPhone[30]!];
      const script: Array<[string, string, unknown, string?]> = [
        ['10:00:00', '/accounts/transactions/submit', sale('account', { phone: a.phone }, 42.5, 'D-1', '09:58:00')],
        [
          '11:30:00',
          '/ecommactivity/purchase',
          {
            ...sale('customer', { email: emailOnly.email }, 120, 'D-2', '11:29:00'),
            ecommerce: { time: String(at('11:29:00')) },
          },
        ],
        ['12:15:00', '/accounts/transactions/submit', sale('account', { phone: b.phone }, 9.9, 'D-3', '12:14:00')],
        ['13:00:00', '/accounts/transactions/submit', sale('account', { phone: a.phone }, 18, 'D-4', '12:59:00')],
        ['16:45:00', '/accounts/transactions/rollback', sale('customer', { phone: a.phone }, 18, 'D-4', '16:44:00')],
        [
          '18:20:00',
          '/accounts/update',
          { phone: d.phone, city: 'Καλαμάτα', businessFields: { favourite: 'freddo espresso' } },
          'PUT',
        ],
      ];
      for (const [time, path, body, method] of script) {
        now = at(time);
        const res = await post(path, body, method);
        expect(res.status, `${path} ${await res.clone().text()}`).toBe(200);
      }
      await emulator.activity.settled();
      expect(emulator.activity.webhookStats()).toMatchObject({ delivered: 5, failed: 0 });
      emulator.activity.unsubscribe(`${receiver.url}/hooks/${SECRET}`);
      await receiver.close();
      const withEvents = [a, emailOnly, b].map((c) => c.customer_id).sort();

      // The postings of the day cannot be read while the source fails: the span fails and its bookmark stays.
      now = at('23:59:00');
      failPostings = true;
      await expect(run(file, DAY)).rejects.toThrow(/loyalty_postings/);
      // Requests of the failed span that were still being retried end before the source heals.
      for (let seen = -1; seen !== emulator.stats.requests('/accounts/loyalty/postings');) {
        seen = emulator.stats.requests('/accounts/loyalty/postings');
        await new Promise((resolve) => setTimeout(resolve, 400));
      }
      failPostings = false;
      await withWarehouse(config, async (conn) => {
        expect(
          Number(
            (await conn.all<{ through_seq: number | string }>(`SELECT through_seq FROM _etl_event_bookmarks`))[0]!
              .through_seq,
          ),
        ).toBe(0);
      });
      // status shows the events waiting for the postings stream
      const waiting = await captureStdout(() => statusCommand({ config: file }));
      expect(waiting.out).toMatch(
        /^webhook events: 5 stored, last received 20\d\d-\d\d-\d\d \d\d:\d\d:\d\d; 5 not yet asked about by loyalty_postings \(bookmark at event 0\)$/m,
      );

      // The nightly run: only the customers with events are asked, and the warehouse reaches the ground truth.
      asked = [];
      emulator.stats.reset();
      const printed = await run(file, DAY);
      const { out: json } = await captureStdout(() => statusCommand({ config: file, json: true }));
      expect(JSON.parse(json).webhookEvents).toMatchObject({ stored: 5, backlog: 0, bookmark: 5 });
      const who = (key: string) => known.find((c) => c.phone === key || c.email === key)!.customer_id;
      expect(asked.map(who).sort()).toEqual(withEvents);
      const requests = emulator.stats.requests('/accounts/loyalty/postings');
      expect(requests).toBeGreaterThanOrEqual(3);
      expect(requests).toBeLessThan(known.length / 4);
      await withWarehouse(config, async (conn) => {
        // the request count is reported: on the postings window, on the run, and in the summary
        const [windows] = await conn.all<{ n: string | number }>(
          `SELECT SUM(requests) AS n FROM _etl_windows WHERE stream = 'loyalty_postings' AND run_id = (SELECT run_id FROM _etl_runs ORDER BY started_at DESC LIMIT 1)`,
        );
        expect(Number(windows!.n)).toBe(requests);
        const reported = Number(/([\d,]+) source requests/.exec(printed)?.[1]?.replaceAll(',', ''));
        expect(reported).toBeGreaterThanOrEqual(requests);
        expect(reported).toBeLessThanOrEqual(emulator.stats.requests());

        expect(sortedByJson(await readPostings(conn))).toEqual(
          sortedByJson([...emulator.truth.postings(START, DAY)].map((p) => ({ ...p }))),
        );
        const dayPostings = await conn.all<{ customer_id: string; receipt: string; n: number | string }>(
          `SELECT customer_id, receipt, COUNT(*) AS n FROM loyalty_postings WHERE posted_at >= CAST($1 AS TIMESTAMPTZ) GROUP BY 1, 2 ORDER BY 2`,
          [new Date(at('00:00:00')).toISOString()],
        );
        expect(dayPostings.map((p) => [p.customer_id, p.receipt, Number(p.n)])).toEqual([
          [a.customer_id, 'D-1', 1],
          [emailOnly.customer_id, 'D-2', 1],
          [b.customer_id, 'D-3', 1],
          [a.customer_id, 'D-4', 2], // the credit and its rollback
        ]);

        const accounts = await readAccounts(conn);
        const [changed] = [...emulator.truth.accounts(DAY, DAY)];
        expect(changed!.customer_id).toBe(d.customer_id);
        expect(accounts.get(d.customer_id)).toEqual({ ...changed });
        expect(accounts.get(d.customer_id)!.city).toBe('Καλαμάτα');
        const [window] = await conn.all<{ w: string }>(
          `SELECT CAST(_window_start AS VARCHAR) AS w FROM accounts WHERE customer_id = $1`,
          [d.customer_id],
        );
        expect(window!.w).toBe(DAY);

        const events = await conn.all<{ customer_id: string; origin_source: string; event_trigger: string }>(
          `SELECT customer_id, origin_source, event_trigger FROM loyalty_events ORDER BY seq`,
        );
        expect(events).toEqual([
          { customer_id: a.customer_id, origin_source: 'POS', event_trigger: 'LOYALTY_POINT_UPDATED' },
          { customer_id: emailOnly.customer_id, origin_source: 'ECOMMERCE', event_trigger: 'LOYALTY_POINT_UPDATED' },
          { customer_id: b.customer_id, origin_source: 'POS', event_trigger: 'LOYALTY_POINT_UPDATED' },
          { customer_id: a.customer_id, origin_source: 'POS', event_trigger: 'LOYALTY_POINT_UPDATED' },
          { customer_id: a.customer_id, origin_source: 'ROLLBACK', event_trigger: 'LOYALTY_POINT_UPDATED' },
        ]);
        expect(
          Number(
            (await conn.all<{ through_seq: number | string }>(`SELECT through_seq FROM _etl_event_bookmarks`))[0]!
              .through_seq,
          ),
        ).toBe(5);
      });

      // Nothing new since: the next run asks nobody.
      asked = [];
      await run(file, DAY);
      expect(asked).toEqual([]);
    });
  },
);
