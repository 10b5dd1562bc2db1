import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { testDestinations } from '../helpers/destinations.js';
import {
  LOYALTY_PROGRAM as PROGRAM,
  MORNING_AFTER,
  STATE_TEST_TIMEOUT as SLOW,
  WEEKS_LATER,
  loyaltyProgram,
  stateJobs,
} from '../helpers/loyalty-program.js';
import { readObservations, truthState } from '../helpers/loyalty-state-reader.js';
import { epochMs, withWarehouse } from '../helpers/warehouse-reader.js';
import { useEmulator } from '../helpers/suite-emulator.js';

const CUSTOMERS = 40;
/** Every night asks every customer: two nights observe everyone twice. */
const SWEEP_DAYS = 1;

type Raw = Record<string, unknown>;

describe.each(testDestinations)('history of the loyalty state and vouchers on $name', (target) => {
  let now = MORNING_AFTER;
  const emulator = useEmulator(loyaltyProgram(25, CUSTOMERS, () => now));

  it(
    'two nights across a month end: a version per customer whose status changed, valid from when it was asked; redeemed and vanished vouchers; the tier mix as of an instant',
    async () => {
      const { config } = await target.fresh();
      const file = stateJobs(emulator, config, SWEEP_DAYS);
      const first = await runCli(['run', '--config', file, '--until', PROGRAM.end]);
      expect(first.code, first.stderr).toBe(0);
      const before = truthState(emulator.truth);
      const askedFirst = await withWarehouse(config, (conn) => readObservations(conn, 'loyalty_status'));
      const vouchersAskedFirst = await withWarehouse(config, (conn) => readObservations(conn, 'vouchers'));
      now = WEEKS_LATER;
      const second = await runCli(['run', '--config', file, '--until', '2024-11-16']);
      expect(second.code, second.stderr).toBe(0);
      const after = truthState(emulator.truth);
      const askedSecond = await withWarehouse(config, (conn) => readObservations(conn, 'loyalty_status'));
      const vouchersAskedSecond = await withWarehouse(config, (conn) => readObservations(conn, 'vouchers'));
      expect(askedFirst.size).toBe(CUSTOMERS);
      for (const [id, o] of askedSecond) expect(o.at, id).toBeGreaterThan(askedFirst.get(id)!.at);

      const history = await withWarehouse(config, (conn) =>
        conn.all<Raw>(
          `SELECT customer_id, tier_name, ${epochMs('valid_from')} AS valid_from, ${epochMs('valid_to')} AS valid_to, is_current FROM loyalty_status_history ORDER BY customer_id, valid_from`,
        ),
      );
      const statusOf = (state: typeof before, id: string) =>
        JSON.stringify(state.status.find((s) => s.customer_id === id));
      let changed = 0;
      for (const id of askedFirst.keys()) {
        const versions = history
          .filter((v) => v.customer_id === id)
          .map((v) => ({
            valid_from: Number(v.valid_from),
            valid_to: v.valid_to === null ? null : Number(v.valid_to),
            is_current: v.is_current,
          }));
        const [t1, t2] = [askedFirst.get(id)!.at, askedSecond.get(id)!.at];
        if (statusOf(before, id) === statusOf(after, id)) {
          expect(
            versions.map((v) => [v.valid_from, v.valid_to, v.is_current]),
            id,
          ).toEqual([[t1, null, true]]);
        } else {
          changed++;
          expect(
            versions.map((v) => [v.valid_from, v.valid_to, v.is_current]),
            id,
          ).toEqual([
            [t1, t2, false],
            [t2, null, true],
          ]);
        }
      }
      expect(changed, 'the month end expired points of some customers').toBeGreaterThan(0);
      expect(changed, 'some customers did not change').toBeLessThan(CUSTOMERS);

      // a voucher redeemed at the source has a version of each status; one no longer listed ends when it was missed
      const vouchers = await withWarehouse(config, (conn) =>
        conn.all<Raw>(
          `SELECT customer_id, code, status, ${epochMs('valid_from')} AS valid_from, ${epochMs('valid_to')} AS valid_to FROM vouchers_history ORDER BY customer_id, code, valid_from`,
        ),
      );
      const versionsOf = (customer: unknown, code: unknown) =>
        vouchers
          .filter((v) => v.customer_id === customer && v.code === code)
          .map((v) => [v.status, Number(v.valid_from), v.valid_to === null ? null : Number(v.valid_to)]);
      const key = (v: Raw) => `${String(v.customer_id)}/${String(v.code)}`;
      const listedBefore = new Map(before.vouchers.map((v) => [key(v), v]));
      const redeemed = after.vouchers.filter(
        (v) => v.status === 'redeemed' && listedBefore.get(key(v))?.status === 'active',
      );
      expect(redeemed.length).toBeGreaterThan(0);
      for (const v of redeemed) {
        const [t1, t2] = [
          vouchersAskedFirst.get(String(v.customer_id))!.at,
          vouchersAskedSecond.get(String(v.customer_id))!.at,
        ];
        expect(versionsOf(v.customer_id, v.code), key(v)).toEqual([
          ['active', t1, t2],
          ['redeemed', t2, null],
        ]);
      }
      const listedAfter = new Set(after.vouchers.map(key));
      const vanished = before.vouchers.filter((v) => !listedAfter.has(key(v)));
      expect(vanished.length).toBeGreaterThan(0);
      for (const v of vanished) {
        const [t1, t2] = [
          vouchersAskedFirst.get(String(v.customer_id))!.at,
          vouchersAskedSecond.get(String(v.customer_id))!.at,
        ];
        expect(versionsOf(v.customer_id, v.code), key(v)).toEqual([[v.status, t1, t2]]);
      }

      // the tier mix between the nights is the first night's, after the second the second's
      const mix = (state: typeof before) => {
        const counts = new Map<string, number>();
        for (const s of state.status) counts.set(String(s.tier_name), (counts.get(String(s.tier_name)) ?? 0) + 1);
        return Object.fromEntries([...counts].sort());
      };
      const mixAsOf = async (instant: number) => {
        const rows = await withWarehouse(config, (conn) =>
          conn.all<{ tier_name: string; n: number | string }>(
            `SELECT tier_name, COUNT(*) AS n FROM loyalty_status_as_of(CAST($1 AS TIMESTAMPTZ)) GROUP BY tier_name ORDER BY tier_name`,
            [new Date(instant).toISOString()],
          ),
        );
        return Object.fromEntries(rows.map((r) => [String(r.tier_name), Number(r.n)]));
      };
      const lastFirst = Math.max(...[...askedFirst.values()].map((o) => o.at));
      const firstSecond = Math.min(...[...askedSecond.values()].map((o) => o.at));
      const lastSecond = Math.max(...[...askedSecond.values()].map((o) => o.at));
      expect(await mixAsOf(lastFirst)).toEqual(mix(before));
      expect(await mixAsOf(firstSecond - 1)).toEqual(mix(before));
      expect(await mixAsOf(lastSecond)).toEqual(mix(after));
      // the tiers held through the month end; the points expiring did not, and each instant sees its own
      const expiringAsOf = async (instant: number) => {
        const rows = await withWarehouse(config, (conn) =>
          conn.all<Raw>(
            `SELECT customer_id, CAST(points_expiring AS VARCHAR) AS p FROM loyalty_status_as_of(CAST($1 AS TIMESTAMPTZ))`,
            [new Date(instant).toISOString()],
          ),
        );
        return Object.fromEntries(rows.map((r) => [String(r.customer_id), r.p === null ? null : Number(r.p)]).sort());
      };
      const expiring = (state: typeof before) =>
        Object.fromEntries(state.status.map((s) => [String(s.customer_id), s.points_expiring]).sort());
      expect(expiring(before)).not.toEqual(expiring(after));
      expect(await expiringAsOf(firstSecond - 1)).toEqual(expiring(before));
      expect(await expiringAsOf(lastSecond)).toEqual(expiring(after));

      const status = await runCli(['status', '--config', file, '--json']);
      expect(status.code, status.stderr).toBe(0);
      const tables = (
        JSON.parse(status.stdout) as { history: Array<{ table: string; versions: number; current: number }> }
      ).history;
      expect(tables.find((h) => h.table === 'loyalty_status_history')).toMatchObject({
        versions: CUSTOMERS + changed,
        current: CUSTOMERS,
      });
      expect(tables.map((h) => h.table)).toEqual(
        expect.arrayContaining(['loyalty_wallets_history', 'loyalty_balance_details_history', 'vouchers_history']),
      );
    },
    SLOW,
  );
});
