import { beforeAll, describe, expect, it } from 'vitest';
import type { DestinationSettings } from '../../src/plan/job-plan.js';
import type { TruthCustomer } from '../../src/emulator/index.js';
import { emulatorJobs, runCli } from '../helpers/cli.js';
import { startReceiverCli } from '../helpers/receiver-cli.js';
import { testDestinations } from '../helpers/destinations.js';
import { withWarehouse } from '../helpers/warehouse-reader.js';
import { saleBody } from '../helpers/sales.js';
import { useEmulator } from '../helpers/suite-emulator.js';

const TZ = 'Europe/Athens';
const NOW = Date.parse('2024-03-21T08:00:00Z');
const SECRET = '9b74c9897bac770ffc029102a200c5de';
const PREVIOUS = 'Rotated-away_secret.of~forty-chars-0123';
const HEADER = 'X-Loyalty-Webhook-Secret';

/** A sale of `paid` by the customer with `phone`, for the emulator to turn into a webhook call. */
const sale = (phone: string, paid: number, receipt: string) => saleBody({ phone }, paid, receipt);

/** Every row of every table of the warehouse, as text. */
async function everyTable(config: DestinationSettings): Promise<string> {
  return withWarehouse(config, async (conn) => {
    const tables = await conn.all<{ table_name: string }>(
      `SELECT table_name FROM information_schema.tables WHERE table_schema = $1`,
      [config.schema],
    );
    const out: Record<string, unknown[]> = {};
    for (const { table_name } of tables)
      out[table_name] = await conn.all(`SELECT * FROM ${conn.schemaSql}."${table_name}"`);
    return JSON.stringify(out, (_, v: unknown) => (typeof v === 'bigint' ? String(v) : v));
  });
}

describe('loyalty-etl webhook refuses to start', () => {
  const file = emulatorJobs({ url: 'http://127.0.0.1:9', timezone: TZ, firstDay: '2024-03-01' });
  const refusal = async (args: string[], env: Record<string, string | undefined>) => {
    const result = await runCli(['webhook', '--config', file, '--port', '0', ...args], {
      LOYALTY_WEBHOOK_SECRET: undefined,
      LOYALTY_WEBHOOK_SECRET_PREVIOUS: undefined,
      ...env,
    });
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    return result.stderr;
  };

  it('without a secret, unless told calls are authenticated in front of it; with a weak one; with a bad flag — exit 2, one line', async () => {
    expect(await refusal([], {})).toMatch(
      /^loyalty-etl: webhook: LOYALTY_WEBHOOK_SECRET is not set; .* or pass --authenticated-upstream .*\n$/,
    );
    const weak = 'correct-horse-battery';
    const weakLine = await refusal([], { LOYALTY_WEBHOOK_SECRET: weak });
    expect(weakLine).toBe(
      'loyalty-etl: webhook: LOYALTY_WEBHOOK_SECRET is 21 characters long; at least 32 are needed (e.g. openssl rand -hex 32)\n',
    );
    const spaced = `${SECRET} ${SECRET}`;
    const spacedLine = await refusal([], { LOYALTY_WEBHOOK_SECRET: spaced });
    expect(spacedLine).toMatch(
      /^loyalty-etl: webhook: LOYALTY_WEBHOOK_SECRET may hold only the characters A-Z a-z 0-9 \. _ ~ - .*\n$/,
    );
    expect(spacedLine).not.toContain(SECRET);
    expect(await refusal([], { LOYALTY_WEBHOOK_SECRET_PREVIOUS: PREVIOUS })).toMatch(
      /^loyalty-etl: webhook: LOYALTY_WEBHOOK_SECRET_PREVIOUS is set but LOYALTY_WEBHOOK_SECRET is not.*\n$/,
    );
    expect(await refusal([], { LOYALTY_WEBHOOK_SECRET: SECRET, LOYALTY_WEBHOOK_SECRET_PREVIOUS: 'short' })).toMatch(
      /^loyalty-etl: webhook: LOYALTY_WEBHOOK_SECRET_PREVIOUS is 5 characters long/,
    );
    expect(await refusal(['--allow-from', '10.0.0.0/8,10.1.0.0/33'], { LOYALTY_WEBHOOK_SECRET: SECRET })).toBe(
      'loyalty-etl: webhook: --allow-from: invalid range on address: 10.1.0.0/33\n',
    );
    expect(await refusal(['--trusted-proxy', 'proxy.internal'], { LOYALTY_WEBHOOK_SECRET: SECRET })).toBe(
      'loyalty-etl: webhook: --trusted-proxy: invalid IP address: proxy.internal\n',
    );
    expect(await refusal(['--max-calls-per-second', '0'], { LOYALTY_WEBHOOK_SECRET: SECRET })).toBe(
      'loyalty-etl: webhook: --max-calls-per-second: 0 is not a whole number of at least 1\n',
    );
    expect(await refusal(['--secret-header', 'X Secret'], { LOYALTY_WEBHOOK_SECRET: SECRET })).toBe(
      'loyalty-etl: webhook: --secret-header: "X Secret" is not an HTTP header name\n',
    );
  });
});

describe.each(testDestinations)('loyalty-etl webhook storing into $name', (target) => {
  let customers: TruthCustomer[];
  const emulator = useEmulator({
    seed: 9,
    accounts: 30,
    startDate: '2024-03-01',
    endDate: '2024-03-20',
    timezone: TZ,
    clock: () => NOW,
    webhooks: { retryDelayMs: 10, maxAttempts: 2 },
  });
  beforeAll(async () => {
    customers = [...emulator.truth.customers('2024-03-20')].filter((c) => c.phone);
  });

  /** DuckDB: the receiver spooled the events, and the next run ingests them into loyalty_events; returns its output. */
  const ingestSpool = async (file: string, events: number): Promise<string> => {
    if (target.name !== 'duckdb') return '';
    const run = await runCli(['run', '--config', file, '--until', '2024-03-20']);
    expect(run.code, run.stderr.slice(-800)).toBe(0);
    expect(run.stdout).toContain(`webhook events from the spool: ${events} stored, 0 already stored`);
    return run.stdout + run.stderr;
  };

  const submit = async (n: number) => {
    const res = await fetch(`${emulator.url}/accounts/transactions/submit`, {
      method: 'POST',
      body: JSON.stringify(sale(customers[n]!.phone!, 10 + n, `H-${n}`)),
    });
    expect(res.status).toBe(200);
  };

  it("stores the service's calls to /hooks/<secret> and, during a rotation, the previous secret's; the secrets reach no log line, output or table", async () => {
    const { config } = await target.fresh();
    const file = emulatorJobs({ url: emulator.url, timezone: TZ, firstDay: '2024-03-01', destination: config });
    const receiver = await startReceiverCli(['--config', file, '--secret-header', HEADER], {
      LOYALTY_WEBHOOK_SECRET: SECRET,
      LOYALTY_WEBHOOK_SECRET_PREVIOUS: PREVIOUS,
    });
    const guess = 'f'.repeat(32);
    const subscribers = [`${receiver.url}/hooks/${SECRET}`, `${receiver.url}/hooks/${guess}`];
    try {
      // The emulated service calls both addresses: the one with the secret is stored, the other never is.
      for (const url of subscribers) emulator.activity.subscribe(url);
      const before = emulator.activity.webhookStats();
      await submit(0);
      await submit(1);
      await emulator.activity.settled();
      const after = emulator.activity.webhookStats();
      expect([after.delivered - before.delivered, after.failed - before.failed]).toEqual([2, 2]);

      const post = (path: string, body: string, headers: Record<string, string> = {}) =>
        fetch(`${receiver.url}${path}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...headers },
          body,
        });
      const event = JSON.stringify({
        origin: { trigger: 'LOYALTY_POINT_UPDATED' },
        customer: { accountId: customers[2]!.customer_id },
        entity: {},
      });
      expect((await post('/hooks', event, { [HEADER]: PREVIOUS })).status).toBe(200);
      expect((await post('/hooks', event, { [HEADER]: guess })).status).toBe(401);
      expect((await post(`/hooks/${SECRET}`, '{"origin":')).status).toBe(400);
    } finally {
      for (const url of subscribers) emulator.activity.unsubscribe(url);
      receiver.child.kill('SIGTERM');
    }
    const done = await receiver.done;
    expect(done.code, done.stderr.slice(-800)).toBe(0);
    expect(done.stdout).toMatch(
      /listening on http:\/\/127\.0\.0\.1:\d+: POST \/hooks\/<secret> or \/hooks with header X-Loyalty-Webhook-Secret;/,
    );
    expect(done.stdout).toMatch(
      /webhook receiver stopped: 3 stored, 0 duplicates, 1 invalid, 0 quarantined, 0 not stored \(answered 503\), 5 refused, 0 over the cap/,
    );
    expect(done.stderr).toContain('"path":"/hooks/[REDACTED]"');
    const ingest = await ingestSpool(file, 3);
    const tables = await everyTable(config);
    expect(tables).toContain(customers[2]!.customer_id);
    await withWarehouse(config, async (conn) => {
      const events = await conn.all<{ customer_id: string }>(`SELECT customer_id FROM loyalty_events ORDER BY seq`);
      expect(events.map((e) => e.customer_id)).toEqual([
        customers[0]!.customer_id,
        customers[1]!.customer_id,
        customers[2]!.customer_id,
      ]);
    });
    const everything = [done.stdout, done.stderr, tables, ingest].join('\n');
    for (const secret of [SECRET, PREVIOUS, guess]) expect(everything).not.toContain(secret);
  });

  it('runs without a secret only when told a proxy authenticates the calls, and says so in its first log line', async () => {
    const { config } = await target.fresh();
    const file = emulatorJobs({ url: emulator.url, timezone: TZ, firstDay: '2024-03-01', destination: config });
    const receiver = await startReceiverCli(['--config', file, '--authenticated-upstream'], {});
    try {
      emulator.activity.subscribe(`${receiver.url}/hooks`);
      await submit(3);
      await emulator.activity.settled();
    } finally {
      emulator.activity.unsubscribe(`${receiver.url}/hooks`);
      receiver.child.kill('SIGTERM');
    }
    const done = await receiver.done;
    expect(done.code, done.stderr.slice(-800)).toBe(0);
    const first = JSON.parse(done.stderr.split('\n')[0]!) as { level: string; msg: string };
    expect(first.level).toBe('warn');
    expect(first.msg).toMatch(/^webhook receiver runs without a secret \(--authenticated-upstream\)/);
    expect(done.stdout).toMatch(/POST \/hooks \(no secret\)/);
    await ingestSpool(file, 1);
    await withWarehouse(config, async (conn) => {
      expect(await conn.all(`SELECT customer_id FROM loyalty_events`)).toEqual([
        { customer_id: customers[3]!.customer_id },
      ]);
    });
  });
});
