import { describe, expect, it } from 'vitest';
import type { Middleware } from '../../src/emulator/index.js';
import { addDays } from '../../src/plan/days.js';
import type { DestinationSettings } from '../../src/plan/job-plan.js';
import { emulatorJobs, runCli } from '../helpers/cli.js';
import { testDestinations, unpublished } from '../helpers/destinations.js';
import { readPostings, sortedByJson, withWarehouse } from '../helpers/warehouse-reader.js';
import { useEmulator } from '../helpers/suite-emulator.js';

const TZ = 'Europe/Athens';
const START = '2024-03-01';
const END = '2024-03-16';
const CUSTOMERS = 45;
const SWEEP_DAYS = 3;
/** The first night loads up to here; then one night per day to END. */
const FIRST_NIGHT = '2024-03-10';
const SLOW = 300_000;

describe.each(testDestinations)('the postings sweep of the cheap selections, into $name', (target) => {
  /** Customers whose postings were asked for since the last reset, by the phone or e-mail of the request. */
  let asked = new Set<string>();
  /** Customers whose loyalty state was asked for since the last reset. */
  let stateAsked = new Set<string>();
  /** Asks since the last reset, a customer asked twice counting twice: first pages of postings, state calls. */
  let asks = { postings: 0, state: 0 };
  const watch: Middleware = async (request, next) => {
    const who = request.query.get('phone') ?? request.query.get('email') ?? '';
    if (request.path === '/accounts/loyalty/postings' && request.query.get('pageNumber') === '1') {
      asked.add(who);
      asks.postings++;
    }
    if (request.path === '/accounts' && request.query.get('includeLoyalty') === 'true') {
      stateAsked.add(who);
      asks.state++;
    }
    return next(request);
  };
  const emulator = useEmulator({
    seed: 38,
    accounts: CUSTOMERS,
    startDate: START,
    endDate: END,
    timezone: TZ,
    hooks: { middleware: [watch] },
  });

  /**
   * A fresh warehouse and a jobs file on it; `quiet` is the same job publishing no copy for analysts, for the
   * nights between a test's first and last (on DuckDB a publish costs each night half a second).
   */
  async function jobsFile(postings: string, firstNight = '', streams = ['accounts', 'loyalty_postings']) {
    const { config } = await target.fresh();
    const jobs = (destination: DestinationSettings) =>
      emulatorJobs({
        url: emulator.url,
        timezone: TZ,
        firstDay: START,
        destination,
        streams,
        lookbackDays: 1,
        pageSize: 50,
        postings: `    postings:\n${postings}${firstNight}`,
      });
    return { config, file: jobs(config), quiet: jobs(unpublished(config)) };
  }

  async function night(file: string, day: string): Promise<number> {
    asked = new Set();
    stateAsked = new Set();
    asks = { postings: 0, state: 0 };
    const result = await runCli(['run', '--config', file, '--until', day]);
    expect(result.code, result.stderr).toBe(0);
    return asked.size;
  }

  async function verify(file: string, day: string) {
    const result = await runCli(['verify', '--config', file, '--from', START, '--to', day]);
    return { ...result, output: result.stdout + result.stderr };
  }

  const identity = (c: { phone: string | null; email: string | null }) => c.phone ?? c.email ?? '';
  const truth = (from: string, to: string) =>
    sortedByJson([...emulator.truth.postings(from, to)].map((p) => ({ ...p })));

  it(
    '`changed` with a sweep: the first night asks everyone, each night after asks the changed and the sweep; verify is clean every night and every posting is loaded within the sweep',
    async () => {
      const { config, file, quiet } = await jobsFile(`      customers: changed\n      sweep_days: ${SWEEP_DAYS}\n`);
      expect(await night(file, FIRST_NIGHT)).toBe([...emulator.truth.customers(FIRST_NIGHT)].length);
      const quota = Math.ceil([...emulator.truth.customers(END)].length / SWEEP_DAYS);
      for (let day = addDays(FIRST_NIGHT, 1); day <= END; day = addDays(day, 1)) {
        const customers = [...emulator.truth.customers(day)];
        const n = await night(day === END ? file : quiet, day);
        // the sweep's quota at least, and not everyone
        expect(n).toBeGreaterThanOrEqual(Math.min(quota, customers.length));
        expect(n).toBeLessThan(customers.length);
        // a run re-reading the look-back days for some customers leaves the other customers' postings counted
        const checked = await verify(file, day);
        expect(checked.code, checked.output).toBe(0);
        expect(checked.output).not.toMatch(/more than expected/);
        expect(checked.stdout).toMatch(new RegExp(`customers: changed with a sweep of ${SWEEP_DAYS} night`));
      }
      // every customer was asked in the last SWEEP_DAYS nights, reading its postings since it was asked before
      const held = sortedByJson(await withWarehouse(config, readPostings));
      const settled = truth(START, addDays(END, -(SWEEP_DAYS - 1)));
      expect(held.filter((p) => settled.some((t) => JSON.stringify(t) === JSON.stringify(p)))).toEqual(settled);
      const all = new Set(truth(START, END).map((p) => JSON.stringify(p)));
      expect(held.filter((p) => !all.has(JSON.stringify(p)))).toEqual([]);
    },
    SLOW,
  );

  it(
    '`webhook` with `first_night: sweep`: the first night asks the sweep only, verify accepts the others for the first period, and the sweep loads their whole history',
    async () => {
      const { config, file } = await jobsFile(
        `      customers: webhook\n      sweep_days: ${SWEEP_DAYS}\n`,
        `    first_night: sweep\n    sweep_days: ${SWEEP_DAYS}\n`,
        ['accounts', 'loyalty_postings', 'loyalty_status'],
      );
      const known = [...emulator.truth.customers(FIRST_NIGHT)];
      const n = await night(file, FIRST_NIGHT);
      // the postings and the state of the sweep's quota, although every customer's account is new in the night's windows
      expect(n).toBe(Math.ceil(known.length / SWEEP_DAYS));
      expect(stateAsked.size).toBe(Math.ceil(known.length / SWEEP_DAYS));
      const first = await verify(file, FIRST_NIGHT);
      expect(first.code, first.output).toBe(0);
      expect(first.stdout).toMatch(
        /loyalty_postings: \d+ customer\(s\) never asked yet, accepted: first_night: sweep leaves them to the sweep until/,
      );
      expect(first.stdout).toMatch(
        /loyalty_status: \d+ customer\(s\) never asked yet, accepted: first_night: sweep leaves them to the sweep until/,
      );
      const swept = new Set(asked);
      for (let day = addDays(FIRST_NIGHT, 1); day < addDays(FIRST_NIGHT, SWEEP_DAYS); day = addDays(day, 1)) {
        await night(file, day);
        for (const c of asked) swept.add(c);
      }
      // every customer was asked once (those first listed since too): those asked on a later night read their postings from the first day
      const through = addDays(FIRST_NIGHT, SWEEP_DAYS - 1);
      expect([...swept].sort()).toEqual([...emulator.truth.customers(through)].map(identity).sort());
      const held = new Set((await withWarehouse(config, readPostings)).map((p) => JSON.stringify(p)));
      const missing = truth(START, FIRST_NIGHT).filter((p) => !held.has(JSON.stringify(p)));
      expect(missing).toEqual([]);
      const last = await verify(file, through);
      expect(last.code, last.output).toBe(0);
      expect(last.output).not.toMatch(/more than expected/);
    },
    SLOW,
  );

  it.each(['webhook', 'changed'])(
    '`%s` with `first_night: sweep` over several postings spans: the night asks the quota once, in its last span, reading the whole history of those customers',
    async (customers) => {
      const { config, file } = await jobsFile(
        `      customers: ${customers}\n      sweep_days: ${SWEEP_DAYS}\n      max_span_days: 3\n`,
        `    first_night: sweep\n    sweep_days: ${SWEEP_DAYS}\n`,
        ['accounts', 'loyalty_postings', 'loyalty_status'],
      );
      const quota = Math.ceil([...emulator.truth.customers(FIRST_NIGHT)].length / SWEEP_DAYS);
      // ten days in spans of three, two lanes: a quota per span asked about four quotas, some customers twice
      expect(await night(file, FIRST_NIGHT)).toBe(quota);
      expect(asks.postings).toBe(quota);
      expect(asks.state).toBe(quota);
      // the customers asked hold every posting they made through the night's last day
      const held = new Set((await withWarehouse(config, readPostings)).map((p) => JSON.stringify(p)));
      const who = new Map([...emulator.truth.customers(FIRST_NIGHT)].map((c) => [c.customer_id, identity(c)]));
      const theirs = truth(START, FIRST_NIGHT).filter((p) => asked.has(who.get(String(p.customer_id)) ?? ''));
      expect(theirs.length).toBeGreaterThan(0);
      expect(theirs.filter((p) => !held.has(JSON.stringify(p)))).toEqual([]);
      // and nobody else's: no other customer was asked
      expect(held.size).toBe(new Set(theirs.map((p) => JSON.stringify(p))).size);
      const first = await verify(file, FIRST_NIGHT);
      expect(first.code, first.output).toBe(0);
    },
    SLOW,
  );
});
