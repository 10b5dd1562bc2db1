import { beforeAll, describe, expect, it } from 'vitest';
import type { DestinationSettings } from '../../src/plan/job-plan.js';
import { runCli, type CliResult } from '../helpers/cli.js';
import { startReceiverCli } from '../helpers/receiver-cli.js';
import { testDestinations } from '../helpers/destinations.js';
import {
  LOYALTY_PROGRAM as PROGRAM,
  MORNING_AFTER,
  STATE_TEST_TIMEOUT as SLOW,
  WEEKS_LATER,
  loyaltyProgram,
  stateJobs,
} from '../helpers/loyalty-program.js';
import { readLoyaltyState, readObservations, readVoucherRows, truthState } from '../helpers/loyalty-state-reader.js';
import { withWarehouse } from '../helpers/warehouse-reader.js';
import { useEmulator } from '../helpers/suite-emulator.js';

const CUSTOMERS = 60;
const SWEEP_DAYS = 3;

describe.each(testDestinations)('loyalty state and vouchers on $name', (target) => {
  let now = MORNING_AFTER;
  const emulator = useEmulator(loyaltyProgram(24, CUSTOMERS, () => now));
  /** The program's first night, the morning after its last day, into a warehouse of its own: where every test starts. */
  let firstNight: { config: DestinationSettings; result: CliResult };
  beforeAll(async () => {
    const { config } = await target.fresh();
    firstNight = { config, result: await night(stateJobs(emulator, config, SWEEP_DAYS), PROGRAM.end) };
  });

  /** A copy of the first night's warehouse, the clock the morning after it, and a jobs file on the copy sweeping every `sweepDays` nights. */
  async function job(sweepDays = SWEEP_DAYS) {
    now = MORNING_AFTER;
    expect(firstNight.result.code, firstNight.result.stderr).toBe(0);
    const { config } = await target.copy(firstNight.config);
    return { config, file: stateJobs(emulator, config, sweepDays) };
  }

  function night(file: string, day: string): Promise<CliResult> {
    return runCli(['run', '--config', file, '--until', day]);
  }

  it(
    "holds every asked customer's status, wallets, balance details and vouchers as the service reports them; re-running changes nothing",
    async () => {
      const { config, file } = await job();
      const truth = truthState(emulator.truth);
      // the first night's windows hold every customer's creation: every one of them is asked
      const held = await withWarehouse(config, async (conn) => ({
        state: await readLoyaltyState(conn),
        observed: await readObservations(conn, 'vouchers'),
      }));
      expect(held.observed.size).toBe(CUSTOMERS);
      expect(held.state.status).toEqual(truth.status);
      expect(held.state.wallets).toEqual(truth.wallets);
      expect(held.state.details).toEqual(truth.details);
      expect(held.state.vouchers).toEqual(truth.vouchers);
      expect(truth.wallets.length, 'some customers hold wallets in two countries').toBeGreaterThan(CUSTOMERS);
      expect(truth.vouchers.some((v) => v.status === 'redeemed')).toBe(true);

      // loading the last night again asks again and leaves the same state
      const again = await runCli([
        'backfill',
        '--config',
        file,
        '--from',
        PROGRAM.end,
        '--to',
        PROGRAM.end,
        '--stream',
        'loyalty_status',
      ]);
      expect(again.code, again.stderr).toBe(0);
      const vouchersAgain = await runCli([
        'backfill',
        '--config',
        file,
        '--from',
        PROGRAM.end,
        '--to',
        PROGRAM.end,
        '--stream',
        'vouchers',
      ]);
      expect(vouchersAgain.code, vouchersAgain.stderr).toBe(0);
      expect(await withWarehouse(config, readLoyaltyState)).toEqual(held.state);

      const status = await runCli(['status', '--config', file]);
      expect(status.code, status.stderr).toBe(0);
      expect(status.stdout).toMatch(
        new RegExp(
          `^loyalty_status: \\d+ customers asked by the last run; ${CUSTOMERS} of ${CUSTOMERS} customers observed within the last ${SWEEP_DAYS} day\\(s\\); oldest observation `,
          'm',
        ),
      );
      const verify = await runCli([
        'verify',
        '--config',
        file,
        '--from',
        PROGRAM.end,
        '--to',
        PROGRAM.end,
        '--stream',
        'loyalty_status',
      ]);
      expect(verify.code, verify.stdout + verify.stderr).toBe(0);
      expect(verify.stdout).toMatch(
        new RegExp(
          `^loyalty_status: ${CUSTOMERS} of ${CUSTOMERS} customers observed within the last ${SWEEP_DAYS} day\\(s\\)`,
          'm',
        ),
      );
      expect(verify.stdout).toMatch(
        /^loyalty_status: loyalty_status \d+ rows, loyalty_wallets \d+ rows, loyalty_balance_details \d+ rows/m,
      );
      expect(verify.stdout).toMatch(/cannot be proven here/);
      // a customer whose observation is lost is one the sweep period no longer covers: verify names it
      const lost = held.state.status[0]!.customer_id as string;
      await withWarehouse(config, (conn) =>
        conn.run(`DELETE FROM _etl_customer_observations WHERE customer_id = $1 AND stream = 'vouchers'`, [lost]),
      );
      const gap = await runCli([
        'verify',
        '--config',
        file,
        '--from',
        PROGRAM.end,
        '--to',
        PROGRAM.end,
        '--stream',
        'vouchers',
      ]);
      expect(gap.code, gap.stdout + gap.stderr).toBe(4);
      expect(gap.stderr).toMatch(
        new RegExp(`vouchers: 1 customer\\(s\\) not observed within the last ${SWEEP_DAYS} day\\(s\\); first: ${lost}`),
      );
    },
    SLOW,
  );

  it(
    'asks a customer whose points expired on the night after its LOYALTY_POINT_UPDATED event, before the sweep would',
    async () => {
      // a sweep of a year: after the first night, only signs of change bring a customer back within days
      const { config, file } = await job(366);
      const first = await withWarehouse(config, (conn) => readObservations(conn, 'loyalty_status'));
      const secret = 'a1b2c3d4e5f60718293a4b5c6d7e8f90';
      const receiver = await startReceiverCli(['--config', file], {
        LOYALTY_WEBHOOK_SECRET: secret,
        LOYALTY_LOG_LEVEL: 'warn',
      });
      const hook = `${receiver.url}/hooks/${secret}`;
      emulator.activity.subscribe(hook);
      try {
        // the month end passes with no activity at all: the service calls the webhook for each customer whose points expired
        now = WEEKS_LATER;
        expect(await emulator.activity.checkExpiries()).toBeGreaterThan(0);
        await emulator.activity.settled();
      } finally {
        emulator.activity.unsubscribe(hook);
        receiver.child.kill('SIGTERM');
      }
      expect((await receiver.done).code).toBe(0);
      // the next night holds no account change and no posting (the program's data ends the day before)
      const run = await night(file, '2024-11-16');
      expect(run.code, run.stderr).toBe(0);
      const held = await withWarehouse(config, async (conn) => ({
        events: new Set(
          (await conn.all<{ customer_id: string }>('SELECT DISTINCT customer_id FROM loyalty_events')).map(
            (e) => e.customer_id,
          ),
        ),
        observed: await readObservations(conn, 'loyalty_status'),
        state: await readLoyaltyState(conn),
      }));
      expect(held.events.size).toBeGreaterThan(1);
      const asked = [...held.observed].filter(([id, o]) => o.at > first.get(id)!.at).map(([id]) => id);
      // every customer with an event, and beyond them only the sweep's one a night
      for (const id of held.events) expect(asked, id).toContain(id);
      expect(asked.length).toBeLessThanOrEqual(held.events.size + Math.ceil(CUSTOMERS / 366));
      const truth = truthState(emulator.truth);
      const ofEvents = (rows: Array<Record<string, unknown>>) =>
        rows.filter((r) => held.events.has(r.customer_id as string));
      expect(ofEvents(held.state.status)).toEqual(ofEvents(truth.status));
      expect(ofEvents(held.state.details)).toEqual(ofEvents(truth.details));
    },
    SLOW,
  );

  it(
    'corrects points that expired and vouchers that changed without any activity within the sweep period, visiting every customer',
    async () => {
      const { config, file } = await job();
      const before = truthState(emulator.truth);
      const vouchersBefore = await withWarehouse(config, readVoucherRows);
      now = WEEKS_LATER;
      const after = truthState(emulator.truth);
      // the move expired points (November's month end), redeemed vouchers and dropped others from the lists
      const expiredNow = after.details.filter(
        (d, i) => (d.points_expired as number) > ((before.details[i]?.points_expired as number) ?? 0),
      );
      expect(expiredNow.length).toBeGreaterThan(0);
      const redeemed = after.vouchers.filter(
        (v) => v.status === 'redeemed' && vouchersBefore.get(`${v.customer_id}/${v.code}`)?.status === 'active',
      );
      expect(redeemed.length).toBeGreaterThan(0);
      const afterCodes = new Set(after.vouchers.map((v) => `${v.customer_id}/${v.code}`));
      const vanished = [...vouchersBefore.keys()].filter((k) => !afterCodes.has(k));
      expect(vanished.length).toBeGreaterThan(0);

      // nights without activity: nothing changes at the source but the clock, so only the sweep asks
      const visited = new Set<string>();
      const firstObserved = await withWarehouse(config, (conn) => readObservations(conn, 'loyalty_status'));
      const days = ['2024-11-16', '2024-11-17', '2024-11-18'];
      for (const [n, day] of days.entries()) {
        const run = await night(file, day);
        expect(run.code, run.stderr).toBe(0);
        const observed = await withWarehouse(config, (conn) => readObservations(conn, 'loyalty_status'));
        const asked = [...observed]
          .filter(([id, o]) => o.at > (firstObserved.get(id)?.at ?? 0) && !visited.has(id))
          .map(([id]) => id);
        // each night asks its share of the directory, those waiting longest first
        expect(asked.length).toBe(Math.ceil(CUSTOMERS / SWEEP_DAYS));
        for (const id of asked) visited.add(id);
        if (n === 0) expect(await withWarehouse(config, readLoyaltyState)).not.toEqual(after);
      }
      expect(visited.size).toBe(CUSTOMERS);

      const held = await withWarehouse(config, async (conn) => ({
        state: await readLoyaltyState(conn),
        vouchers: await readVoucherRows(conn),
      }));
      expect(held.state.status).toEqual(after.status);
      expect(held.state.wallets).toEqual(after.wallets);
      expect(held.state.details).toEqual(after.details);
      expect(held.state.vouchers).toEqual(after.vouchers);
      for (const v of redeemed) expect(held.vouchers.get(`${v.customer_id}/${v.code}`)?.status).toBe('redeemed');
      for (const key of vanished) {
        const row = held.vouchers.get(key);
        expect(row, key).toBeDefined();
        expect(row!.gone, key).not.toBeNull();
        // kept as it was last seen, from the night it was first seen
        expect(row!.first).toBe(vouchersBefore.get(key)!.first);
      }
    },
    SLOW,
  );

  it(
    'takes a customer the service answers 1005 for as no data: no error, its old state removed',
    async () => {
      const { config, file } = await job();
      // a customer the warehouse knows and the service no longer does, with the state it once had
      await withWarehouse(config, async (conn) => {
        await conn.run(
          `INSERT INTO accounts (customer_id, phone, _window_start, _run_id, _loaded_at) SELECT 'C-GONE', '+30699999999', _window_start, _run_id, _loaded_at FROM accounts LIMIT 1`,
        );
        await conn.run(`INSERT INTO loyalty_status (customer_id, tier_name, observed_at, _window_start, _run_id, _loaded_at)
                         SELECT 'C-GONE', tier_name, observed_at, _window_start, _run_id, _loaded_at FROM loyalty_status LIMIT 1`);
      });
      const run = await night(file, '2024-11-16');
      expect(run.code, run.stderr).toBe(0);
      const after = await withWarehouse(config, async (conn) => ({
        status: await conn.all(`SELECT customer_id FROM loyalty_status WHERE customer_id = 'C-GONE'`),
        observed: await readObservations(conn, 'loyalty_status'),
        rejects: await conn.all(`SELECT stream FROM _etl_rejects`),
      }));
      expect(after.observed.get('C-GONE')?.outcome).toBe('not_found');
      expect(after.status).toEqual([]);
      expect(after.rejects).toEqual([]);
    },
    SLOW,
  );
});
