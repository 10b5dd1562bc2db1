import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import pLimit from 'p-limit';
import { describe, expect, it } from 'vitest';
import type { DestinationSettings } from '../../src/plan/job-plan.js';
import { eventSpoolOf } from '../../src/config/duckdb-files.js';
import { emulatorJobs, runCli, startCli } from '../helpers/cli.js';
import { testDestinations } from '../helpers/destinations.js';
import { RequestGate, waitForOutput } from '../helpers/request-gate.js';
import { withWarehouse } from '../helpers/warehouse-reader.js';
import { useEmulator } from '../helpers/suite-emulator.js';

const TZ = 'Europe/Athens';
const FROM = '2024-06-01';
const TO = '2024-06-05';
const SECRET = '3c59dc048e8850243be8079a5c74d079';

/** A loyalty webhook body of its own for every `n`. */
const body = (n: number) =>
  JSON.stringify({
    origin: { trigger: 'LOYALTY_POINT_UPDATED', source: 'POS' },
    customer: { accountId: `C${String(n).padStart(6, '0')}` },
    entity: { cumulativeCredit: n },
  });

/** Starts `loyalty-etl webhook` on a free port and waits for its address. */
async function startReceiver(file: string) {
  const cli = startCli(['webhook', '--config', file, '--port', '0'], { LOYALTY_WEBHOOK_SECRET: SECRET });
  await waitForOutput(cli, /listening on http:\/\/[^\s:]+:\d+/);
  const url = /listening on (http:\/\/[^\s:]+:\d+)/.exec(cli.output())![1]!;
  return { ...cli, hook: `${url}/hooks/${SECRET}` };
}

/** Every stored event's key and how often it is there. */
async function storedKeys(config: DestinationSettings): Promise<Map<string, number>> {
  return withWarehouse(config, async (conn) => {
    const rows = await conn.all<{ event_key: string; n: number | string }>(
      `SELECT event_key, COUNT(*) AS n FROM loyalty_events GROUP BY event_key`,
    );
    return new Map(rows.map((r) => [r.event_key, Number(r.n)]));
  });
}

describe.each(testDestinations)('the webhook receiver while a run holds the $name warehouse', (target) => {
  const gate = new RequestGate();
  const emulator = useEmulator({
    seed: 12,
    accounts: 40,
    startDate: FROM,
    endDate: TO,
    timezone: TZ,
    port: 0,
    hooks: { middleware: [gate.middleware] },
  });

  /** A run held in the middle of its work (the warehouse open) until `release` is called. */
  async function heldRun(file: string) {
    gate.close();
    const run = startCli(['run', '--config', file, '--until', TO]);
    await waitForOutput(run, /"run started"/);
    return {
      async release() {
        gate.openUp();
        const done = await run.done;
        expect(done.code, done.stderr.slice(-800)).toBe(0);
      },
    };
  }

  /** The next run, which ingests what the DuckDB receiver spooled. */
  async function nextRun(file: string): Promise<string> {
    const next = await runCli(['run', '--config', file, '--until', TO]);
    expect(next.code, next.stderr.slice(-800)).toBe(0);
    return next.stdout;
  }

  it('answers a burst of calls during a long run with 200, never 503, and every event ends in loyalty_events exactly once', async () => {
    const { config } = await target.fresh();
    const file = emulatorJobs({ url: emulator.url, timezone: TZ, firstDay: FROM, destination: config });
    const receiver = await startReceiver(file);
    const run = await heldRun(file);
    let statuses: number[];
    try {
      // 60 events, each delivered twice (a redelivery after a lost answer), all at once
      const calls = [...Array.from({ length: 60 }, (_, n) => n), ...Array.from({ length: 60 }, (_, n) => n)];
      statuses = await Promise.all(
        calls.map(
          async (n) =>
            (
              await fetch(receiver.hook, {
                method: 'POST',
                headers: { 'content-type': 'application/json' },
                body: body(n),
              })
            ).status,
        ),
      );
    } finally {
      await run.release();
      receiver.child.kill('SIGTERM');
    }
    expect(statuses.filter((s) => s !== 200)).toEqual([]);
    const stopped = await receiver.done;
    expect(stopped.stdout).toMatch(/0 not stored \(answered 503\)/);

    const ingested = await nextRun(file);
    if (target.name === 'duckdb')
      expect(ingested).toContain('webhook events from the spool: 60 stored, 60 already stored');
    const keys = await storedKeys(config);
    expect(keys.size).toBe(60);
    expect([...keys.values()].every((n) => n === 1)).toBe(true);
    await withWarehouse(config, async (conn) => {
      const credits = await conn.all<{ c: string }>(
        `SELECT CAST(CAST(cumulative_credit AS INTEGER) AS VARCHAR) AS c FROM loyalty_events ORDER BY 1`,
      );
      expect(credits.map((r) => Number(r.c)).sort((a, b) => a - b)).toEqual(Array.from({ length: 60 }, (_, n) => n));
    });
  });

  it('a receiver killed with SIGKILL in the middle of a burst loses no event it acknowledged', async () => {
    const { config } = await target.fresh();
    const file = emulatorJobs({ url: emulator.url, timezone: TZ, firstDay: FROM, destination: config });
    const receiver = await startReceiver(file);
    const run = await heldRun(file);
    const acknowledged = new Set<string>();
    try {
      const limit = pLimit(16);
      await Promise.all(
        Array.from({ length: 400 }, (_, n) =>
          limit(async () => {
            if (receiver.child.exitCode !== null || receiver.child.signalCode !== null) return;
            const answer = await fetch(receiver.hook, {
              method: 'POST',
              headers: { 'content-type': 'application/json' },
              body: body(1000 + n),
            }).catch(() => undefined);
            if (answer?.status === 200) acknowledged.add(((await answer.json()) as { eventKey: string }).eventKey);
            // killed with calls in flight: some written and not yet answered, some half-written
            if (acknowledged.size === 120) receiver.child.kill('SIGKILL');
          }),
        ),
      );
    } finally {
      receiver.child.kill('SIGKILL');
      await run.release();
    }
    expect((await receiver.done).signal).toBe('SIGKILL');
    expect(acknowledged.size).toBeGreaterThanOrEqual(120);

    await nextRun(file);
    const keys = await storedKeys(config);
    expect([...acknowledged].filter((key) => keys.get(key) !== 1)).toEqual([]);
    expect([...keys.values()].every((n) => n === 1)).toBe(true);
    const spool = eventSpoolOf(config);
    if (spool) expect(readdirSync(join(spool, 'ready'))).toEqual([]);
  });
});
