import { beforeAll, describe, expect, it } from 'vitest';
import type { Middleware, TruthCustomer } from '../../src/emulator/index.js';
import { emulatorJobs, runCli } from '../helpers/cli.js';
import { testDestinations } from '../helpers/destinations.js';
import { readPostings, sortedByJson, withWarehouse } from '../helpers/warehouse-reader.js';
import { useEmulator } from '../helpers/suite-emulator.js';

const TZ = 'Europe/Athens';
const START = '2024-03-01';
const END = '2024-03-20';

describe.each(testDestinations)('customers the service cannot be asked about, into $name', (target) => {
  let contactless: TruthCustomer[];
  /** A customer with a phone, whose postings the service refuses with 1010. */
  let refused: TruthCustomer;
  /** Postings requests that named neither a phone nor an e-mail. */
  let anonymous = 0;
  let refusedPhone = '';
  const refuse: Middleware = async (request, next) => {
    if (request.path === '/accounts/loyalty/postings' && !request.query.get('phone') && !request.query.get('email'))
      anonymous++;
    if (request.path === '/accounts/loyalty/postings' && request.query.get('phone') === refusedPhone) {
      return {
        status: 400,
        headers: { 'content-type': 'application/json' },
        body: '{"code":1010,"message":"At least one of the following fields is required: phone, email"}',
      };
    }
    return next(request);
  };
  const emulator = useEmulator({
    seed: 31,
    accounts: 80,
    startDate: START,
    endDate: END,
    timezone: TZ,
    contactlessRate: 0.06,
    hooks: { middleware: [refuse] },
  });
  beforeAll(async () => {
    const customers = [...emulator.truth.customers(END)];
    contactless = customers.filter((c) => c.phone === null && c.email === null);
    const postingsOf = new Set([...emulator.truth.postings(START, END)].map((p) => p.customer_id));
    refused = customers.find((c) => c.phone !== null && postingsOf.has(c.customer_id))!;
    refusedPhone = refused.phone!;
  });

  it('rejects each of them with the reason, skips them, and loads everyone else: exit 0', async () => {
    expect(contactless.length).toBeGreaterThan(1);
    const { config } = await target.fresh();
    const file = emulatorJobs({
      url: emulator.url,
      timezone: TZ,
      firstDay: START,
      destination: config,
      streams: ['accounts', 'loyalty_postings'],
    });
    const result = await runCli(['run', '--config', file, '--until', END]);
    expect(result.stderr).not.toMatch(/window\(s\) failed/);
    expect(result.code).toBe(0);

    const truth = sortedByJson(
      [...emulator.truth.postings(START, END)]
        .filter((p) => p.customer_id !== refused.customer_id)
        .map((p) => ({ ...p })),
    );
    await withWarehouse(config, async (conn) => {
      expect(sortedByJson(await readPostings(conn))).toEqual(truth);
      const rejects = await conn.all<{ payload: string; error: string }>(
        `SELECT CAST(payload AS VARCHAR) AS payload, error FROM _etl_rejects WHERE stream = 'loyalty_postings'`,
      );
      const byCustomer = new Map(rejects.map((r) => [(JSON.parse(r.payload) as { customerId: string }).customerId, r]));
      expect(rejects).toHaveLength(contactless.length + 1);
      for (const c of contactless) {
        expect(JSON.parse(byCustomer.get(c.customer_id)!.payload)).toEqual({
          customerId: c.customer_id,
          phone: null,
          email: null,
        });
        expect(byCustomer.get(c.customer_id)!.error).toBe(
          `postings of ${c.customer_id}: the customer has neither phone nor e-mail, so the service cannot be asked about it; skipped`,
        );
      }
      expect(byCustomer.get(refused.customer_id)!.error).toMatch(
        new RegExp(
          `^postings of ${refused.customer_id} page 1: 1010 At least one .* \\(HTTP 400\\): the service cannot be asked about this customer; skipped$`,
        ),
      );
      const windows = await conn.all<{ status: string; n: number | string }>(
        `SELECT status, COUNT(*) AS n FROM _etl_windows WHERE stream = 'loyalty_postings' GROUP BY status`,
      );
      expect(windows.map((w) => [w.status, Number(w.n)])).toEqual([['done', 20]]);
    });
    // a customer without phone and e-mail is never sent to the service
    expect(anonymous).toBe(0);
  });
});
