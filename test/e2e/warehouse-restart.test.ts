import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator, type Emulator } from '../../src/emulator/index.js';
import type { JobStatus } from '../../src/state/status-report.js';
import { emulatorJobs, runCli, startCli, type CliResult } from '../helpers/cli.js';
import { truthContents, warehouseContents } from '../helpers/ground-truth.js';
import { createTestDatabase, startThrowawayServer, type PostgresServer } from '../helpers/postgres-server.js';

const TZ = 'Europe/Athens';
const START = '2024-02-01';
const END = '2024-02-21';
const STREAMS = ['accounts', 'surveys', 'loyalty_postings'];

/** Resolves once `output()` holds `count` matches of `pattern`. */
async function waitFor(output: () => string, pattern: RegExp, count: number): Promise<void> {
  while ((output().match(new RegExp(pattern, 'g')) ?? []).length < count) await new Promise((r) => setTimeout(r, 20));
}

/** The one line a fault must end with: no trace, no second `loyalty-etl:` line. */
function expectOneLine(result: CliResult): string {
  expect(result.stderr).not.toMatch(/Unhandled 'error' event|^\s+at /m);
  const lines = result.stderr.trim().split('\n');
  expect(
    lines.filter((l) => l.startsWith('loyalty-etl:')),
    result.stderr,
  ).toHaveLength(1);
  return lines.at(-1)!;
}

// The server is one of the test's own: restarting the shared one would cut every other suite's sessions.
describe('the PostgreSQL warehouse restarted or killed in the middle of a run', () => {
  let server: PostgresServer;
  let emulator: Emulator;
  beforeAll(async () => {
    server = await startThrowawayServer();
    emulator = await startEmulator({
      seed: 31,
      accounts: 60,
      startDate: START,
      endDate: END,
      timezone: TZ,
      faults: { latencyMs: 20 },
    });
  }, 120_000);
  afterAll(async () => {
    await emulator?.close();
    await server?.stop();
  });

  async function runCutShort(cut: (url: string) => Promise<void>, command: 'run' | 'backfill' = 'run') {
    const url = await createTestDatabase(server.url, 'restart_');
    const file = emulatorJobs({
      url: emulator.url,
      timezone: TZ,
      firstDay: START,
      destination: { type: 'postgres', url, schema: 'public', publish_path: false } as never,
      streams: STREAMS,
      pageSize: 10,
    });
    const args = command === 'run' ? ['--until', END] : ['--from', START, '--to', END];
    // the window loaded lines it waits for are at debug
    const cli = startCli([command, '--config', file, ...args], {
      LOYALTY_PII_SALT: 'salt-for-tests',
      LOYALTY_LOG_LEVEL: 'debug',
    });
    await waitFor(cli.output, /"window loaded"/, 3);
    await cut(url);
    return { url, file, command, result: await cli.done };
  }

  /**
   * How the run must end, and what the next run must leave: the run recorded, claims let go, the source's data
   * exactly. A session lost while idle in the pool costs nothing (the run goes on, on a new one, and may succeed); one
   * lost under a span or a ledger statement fails the run with one line.
   */
  async function expectCleanEnd(url: string, file: string, result: CliResult, command: 'run' | 'backfill' = 'run') {
    expect(result.stderr).not.toMatch(/Unhandled 'error' event|^\s+at /m);
    if (result.code !== 0) {
      const line = expectOneLine(result);
      expect(result.code, result.stderr).toBe(1);
      expect(line).toMatch(/^loyalty-etl: .*(connect|administrator|terminat)/i);
    }

    const status = await runCli(['status', '--config', file, '--json'], { LOYALTY_PII_SALT: 'salt-for-tests' });
    expect(status.code, status.stderr).toBe(0);
    const report = JSON.parse(status.stdout) as JobStatus;
    expect(report.runs[0]).toMatchObject({
      status: result.code === 0 ? 'succeeded' : 'failed',
      command: expect.stringMatching(new RegExp(`^${command}`)),
    });
    expect(report.runLock).toBeNull();
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      const held = await client.query(`SELECT window_start FROM _etl_windows WHERE claimed_by IS NOT NULL`);
      expect(held.rows).toEqual([]);
    } finally {
      await client.end();
    }

    const next = await runCli(['run', '--config', file, '--until', END], { LOYALTY_PII_SALT: 'salt-for-tests' });
    expect(next.code, next.stderr).toBe(0);
    expect(await warehouseContents({ type: 'postgres', url, schema: 'public' })).toEqual(
      truthContents(emulator, START, END),
    );
  }

  it('its sessions ended by an administrator (pg_terminate_backend): no trace; one line and exit 1 when a span lost its session, the run recorded and its claims let go; the next run exact', async () => {
    const { url, file, result } = await runCutShort(async (url) => {
      const admin = new pg.Client({ connectionString: server.url });
      await admin.connect();
      try {
        const database = decodeURIComponent(new URL(url).pathname.slice(1));
        await admin.query(
          `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND application_name LIKE 'loyalty-etl%'`,
          [database],
        );
      } finally {
        await admin.end();
      }
    });
    await expectCleanEnd(url, file, result);
  }, 120_000);

  it('the server restarted (fast, as an administrator would): the same', async () => {
    const { url, file, result } = await runCutShort(() => server.restart('fast'));
    await expectCleanEnd(url, file, result);
  }, 120_000);

  it('the server killed and started again a second later (crash recovery): the same', async () => {
    const { url, file, result } = await runCutShort(() => server.restart('immediate', 1000));
    await expectCleanEnd(url, file, result);
  }, 120_000);

  it('a backfill, the server restarted under it: the same', async () => {
    const { url, file, result } = await runCutShort(() => server.restart('fast'), 'backfill');
    await expectCleanEnd(url, file, result, 'backfill');
  }, 120_000);
});
