import { describe, expect, it } from 'vitest';
import { backfillCommand } from '../../src/commands/backfill.js';
import { runCommand } from '../../src/commands/run.js';
import type { Emulator } from '../../src/emulator/index.js';
import { emulatorJobs, runCli, startCli } from '../helpers/cli.js';
import { testDestinations } from '../helpers/destinations.js';
import {
  pivotMismatches,
  readAccounts,
  readSurveyResponses,
  sortedByJson,
  withWarehouse,
} from '../helpers/warehouse-reader.js';
import { useEmulator } from '../helpers/suite-emulator.js';

const RANGE = { startDate: '2024-01-01', endDate: '2024-01-20' } as const;
const TZ = 'Europe/Athens';

function truthAccounts(emulator: Emulator, start: string, end: string): Map<string, Record<string, unknown>> {
  return new Map([...emulator.truth.accounts(start, end)].map((a) => [a.customer_id, { ...a }]));
}

describe.each(testDestinations)('accounts stream into $name', (target) => {
  const emulator = useEmulator({ seed: 11, accounts: 150, ...RANGE, timezone: TZ, port: 0 });

  it('a backfill with 4 windows at once equals the ground truth, field by field, latest version of every customer', async () => {
    const { config } = await target.fresh();
    const file = emulatorJobs({ url: emulator.url, timezone: TZ, firstDay: RANGE.startDate, destination: config });
    await backfillCommand({ config: file, from: RANGE.startDate, to: RANGE.endDate, concurrency: '4' });
    const truth = truthAccounts(emulator, RANGE.startDate, RANGE.endDate);
    await withWarehouse(config, async (conn) => {
      const loaded = await readAccounts(conn);
      expect(loaded.size).toBe(truth.size);
      for (const [id, expected] of truth) expect(loaded.get(id), id).toEqual(expected);
      expect(await pivotMismatches(conn)).toEqual([]);
    });
    // some customers changed in a later window than the one that created them: the later version is kept
    const early = truthAccounts(emulator, RANGE.startDate, '2024-01-07');
    const changed = [...early].filter(([id, a]) => JSON.stringify(truth.get(id)) !== JSON.stringify(a));
    expect(changed.length).toBeGreaterThan(0);
  });

  it('re-running changes nothing, and the next day reads only the new window and the look-back', async () => {
    const { config } = await target.fresh();
    const file = emulatorJobs({
      url: emulator.url,
      timezone: TZ,
      firstDay: RANGE.startDate,
      destination: config,
      lookbackDays: 2,
    });
    await runCommand({ config: file, until: '2024-01-10' });
    const snapshot = async () =>
      withWarehouse(config, async (conn) => ({
        accounts: await readAccounts(conn),
        windows: await conn.all(`SELECT CAST(window_start AS VARCHAR) AS w, rows_loaded FROM _etl_windows ORDER BY 1`),
      }));
    const first = await snapshot();
    expect(first.accounts).toEqual(truthAccounts(emulator, RANGE.startDate, '2024-01-10'));

    await backfillCommand({ config: file, from: '2024-01-03', to: '2024-01-06' });
    await runCommand({ config: file, until: '2024-01-10' });
    expect(await snapshot()).toEqual(first);

    emulator.stats.reset();
    await runCommand({ config: file, until: '2024-01-11' });
    await withWarehouse(config, async (conn) => {
      const [lastRun] = await conn.all<{ run_id: string }>(
        `SELECT run_id FROM _etl_runs ORDER BY started_at DESC LIMIT 1`,
      );
      const windows = await conn.all<{ w: string }>(
        `SELECT CAST(window_start AS VARCHAR) AS w FROM _etl_windows WHERE run_id = $1 ORDER BY 1`,
        [lastRun!.run_id],
      );
      expect(windows.map((w) => w.w)).toEqual(['2024-01-09', '2024-01-10', '2024-01-11']);
      const [mark] = await conn.all<{ d: string }>(
        `SELECT CAST(complete_through AS VARCHAR) AS d FROM _etl_watermarks`,
      );
      expect(mark!.d).toBe('2024-01-11');
      expect(await readAccounts(conn)).toEqual(truthAccounts(emulator, RANGE.startDate, '2024-01-11'));
    });
    expect(emulator.stats.requests('/business-data/accounts')).toBeGreaterThanOrEqual(3);
    expect(emulator.stats.requests('/business-data/accounts')).toBeLessThan(3 * 6);
  });

  it('gives every hostile custom-field name its own column and keeps the original names', async () => {
    const { config } = await target.fresh();
    const file = emulatorJobs({ url: emulator.url, timezone: TZ, firstDay: RANGE.startDate, destination: config });
    await backfillCommand({ config: file, from: RANGE.startDate, to: RANGE.endDate });
    const truthKeys = new Set(
      [...emulator.truth.accounts(RANGE.startDate, RANGE.endDate)].flatMap((a) => Object.keys(a.custom_fields)),
    );
    await withWarehouse(config, async (conn) => {
      const map = await conn.all<{ column_name: string; source_key: string }>(
        `SELECT column_name, source_key FROM _etl_columns WHERE table_name = 'accounts'`,
      );
      expect(new Set(map.map((m) => m.source_key))).toEqual(truthKeys);
      expect(new Set(map.map((m) => m.column_name)).size).toBe(map.length);
      for (const m of map) expect(m.column_name).toMatch(/^cf_[a-z0-9_]+$/);
      const names = await conn.all<{ field_name: string }>('SELECT DISTINCT field_name FROM account_custom_fields');
      expect(new Set(names.map((n) => n.field_name))).toEqual(truthKeys);
      expect([...truthKeys].some((k) => k.includes("'"))).toBe(true);
      expect([...truthKeys].some((k) => k.length >= 300)).toBe(true);
    });
  });
});

describe.each(testDestinations)('bad input and crashes into $name', (target) => {
  const emulator = useEmulator({
    seed: 5,
    accounts: 400,
    startDate: '2024-02-01',
    endDate: '2024-02-14',
    timezone: TZ,
    badRecordRate: 0.02,
    port: 0,
  });

  it('puts records without a key in _etl_rejects with their payload, loads the rest (a bad field NULL and kept in _etl_field_rejects), shows both in status, exits 0', async () => {
    const { config } = await target.fresh();
    const file = emulatorJobs({ url: emulator.url, timezone: TZ, firstDay: '2024-02-01', destination: config });
    const result = await runCli(['run', '--config', file, '--until', '2024-02-14']);
    expect(result.stderr).not.toMatch(/loyalty-etl: /);
    expect(result.code).toBe(0);
    const rejects = [...emulator.truth.rejects('accounts', '2024-02-01', '2024-02-14')];
    expect(rejects.length).toBeGreaterThan(0);
    const fields = [...emulator.truth.fieldRejects('accounts', '2024-02-01', '2024-02-14')];
    expect(fields.length).toBeGreaterThan(0);
    const nulls = result.stdout.match(
      /^accounts: .*, (\d+) fields? loaded as NULL \(unreadable; see _etl_field_rejects\)$/m,
    );
    expect(Number(nulls?.[1]), result.stdout).toBe(fields.length);
    await withWarehouse(config, async (conn) => {
      const held = await conn.all<{
        stream: string;
        record_key: string;
        field: string;
        raw_value: string;
        error: string;
      }>(`SELECT stream, record_key, field, raw_value, error FROM _etl_field_rejects`);
      expect(held.map((f) => [f.stream, f.record_key, f.field, f.raw_value]).sort()).toEqual(
        fields.map((f) => ['accounts', f.customer_id, f.field, f.raw_value]).sort(),
      );
      for (const f of held) expect(f.error).toMatch(new RegExp(`^${f.field.replace(/\./g, '\\.')}: `));
      const stored = await conn.all<{ payload: string; error: string }>(
        `SELECT payload, error FROM _etl_rejects WHERE stream = 'accounts'`,
      );
      expect(stored.map((r) => JSON.parse(r.payload)).sort(byJson)).toEqual(rejects.map((r) => r.payload).sort(byJson));
      for (const r of stored) expect(r.error.length).toBeGreaterThan(3);
      expect(await readAccounts(conn)).toEqual(truthAccounts(emulator, '2024-02-01', '2024-02-14'));
    });
    const status = await runCli(['status', '--config', file, '--json']);
    expect(status.code).toBe(0);
    const accounts = JSON.parse(status.stdout).streams.find((s: { stream: string }) => s.stream === 'accounts');
    expect(accounts.rejects).toBe(rejects.length);
    expect(accounts.fieldRejects).toBe(fields.length);
    expect(accounts.completeThrough).toBe('2024-02-14');
  });

  it('loads a malformed survey answer whose key can be read with its bad field NULL and its good answers, as the truth says', async () => {
    const { config } = await target.fresh();
    const [from, to] = ['2024-02-01', '2024-02-14'];
    const file = emulatorJobs({
      url: emulator.url,
      timezone: TZ,
      firstDay: from,
      destination: config,
      streams: ['accounts', 'surveys'],
    });
    const result = await runCli(['run', '--config', file, '--until', to]);
    expect(result.code, result.stderr.slice(-800)).toBe(0);
    const fields = [...emulator.truth.fieldRejects('surveys', from, to)];
    expect(fields.length).toBeGreaterThan(0);
    expect(result.stdout).toMatch(new RegExp(`^surveys: .*, ${fields.length} fields? loaded as NULL`, 'm'));
    await withWarehouse(config, async (conn) => {
      expect(sortedByJson(await readSurveyResponses(conn))).toEqual(
        sortedByJson([...emulator.truth.surveyResponses(from, to)].map((r) => ({ ...r }))),
      );
      const held = await conn.all<{ customer_id: string; field: string; raw_value: string }>(
        `SELECT r.customer_id, f.field, f.raw_value FROM _etl_field_rejects f JOIN survey_responses r ON r.response_id = f.record_key WHERE f.stream = 'surveys'`,
      );
      expect(held.map((f) => [f.customer_id, f.field, f.raw_value]).sort()).toEqual(
        fields.map((f) => [f.customer_id, f.field, f.raw_value]).sort(),
      );
      const stored = await conn.all<{ payload: string }>(`SELECT payload FROM _etl_rejects WHERE stream = 'surveys'`);
      expect(stored.map((r) => JSON.parse(r.payload)).sort(byJson)).toEqual(
        [...emulator.truth.rejects('surveys', from, to)].map((r) => r.payload).sort(byJson),
      );
    });
  });

  it('killed with SIGKILL in the middle of loading, then re-run: exact ground truth, no duplicates', async () => {
    const { config } = await target.fresh();
    const file = emulatorJobs({
      url: emulator.url,
      timezone: TZ,
      firstDay: '2024-02-01',
      destination: config,
      pageSize: 5,
    });
    const victim = startCli(
      ['backfill', '--config', file, '--from', '2024-02-01', '--to', '2024-02-14', '--concurrency', '3'],
      { LOYALTY_LOG_LEVEL: 'debug' },
    );
    await new Promise<void>((resolve, reject) => {
      const timer = setInterval(() => {
        if ((victim.output().match(/"window loaded"/g) ?? []).length >= 3) {
          clearInterval(timer);
          victim.child.kill('SIGKILL');
          resolve();
        }
      }, 5);
      victim.done.then(() => {
        clearInterval(timer);
        reject(new Error(`finished before it could be killed: ${victim.output().slice(-500)}`));
      });
    });
    const killed = await victim.done;
    expect(killed.signal).toBe('SIGKILL');
    const again = await runCli(['backfill', '--config', file, '--from', '2024-02-01', '--to', '2024-02-14']);
    expect(again.code, again.stderr.slice(-500)).toBe(0);
    await withWarehouse(config, async (conn) => {
      expect(await readAccounts(conn)).toEqual(truthAccounts(emulator, '2024-02-01', '2024-02-14'));
      const [dupes] = await conn.all<{ n: number | string }>(
        `SELECT COUNT(*) - COUNT(DISTINCT customer_id || '|' || field_name || '|' || CAST(position AS VARCHAR)) AS n FROM account_custom_fields`,
      );
      expect(Number(dupes!.n)).toBe(0);
    });
  });
});

function byJson(a: unknown, b: unknown): number {
  const x = JSON.stringify(a);
  const y = JSON.stringify(b);
  return x < y ? -1 : x > y ? 1 : 0;
}
