import { existsSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator } from '../../src/emulator/index.js';
import { emulatorJobs, runCli, type CliResult } from '../helpers/cli.js';
import { postgresTestDestination } from '../helpers/destinations.js';
import { testTempDir } from '../helpers/temp-dir.js';

/** A jobs file whose source nobody needs to reach: the commands below fail before they ask it anything. */
const jobs = () => emulatorJobs({ url: 'http://127.0.0.1:9', timezone: 'Europe/Athens', firstDay: '2024-01-01' });

/** The one line a mistake must end with, and nothing else on stderr: no stack trace, no log lines. */
function expectOneLine(result: CliResult, code: number, line: RegExp): void {
  expect(result.stderr.trim().split('\n'), result.stderr).toEqual([expect.stringMatching(line)]);
  expect(result.stderr).toMatch(/^loyalty-etl: /);
  expect(result.code, result.stderr).toBe(code);
}

describe('environment mistakes: one line and the documented exit code', () => {
  let busy: Server;
  let busyPort: number;
  beforeAll(async () => {
    busy = createServer();
    await new Promise<void>((resolve) => busy.listen(0, '127.0.0.1', resolve));
    busyPort = (busy.address() as { port: number }).port;
  });
  afterAll(() => new Promise<void>((resolve) => busy.close(() => resolve())));

  it('a PostgreSQL URL nobody listens on: 1 (the warehouse cannot be reached), the password never shown', async () => {
    for (const command of ['status', 'run']) {
      const result = await runCli([command, '--config', jobs()], {
        LOYALTY_WAREHOUSE: 'postgres://etl:s3cret-pw@127.0.0.1:1/analytics',
      });
      expectOneLine(
        result,
        1,
        /^loyalty-etl: cannot connect to the warehouse postgres:\/\/etl@127\.0\.0\.1:1\/analytics: .*ECONNREFUSED/,
      );
      expect(result.stderr).not.toContain('s3cret-pw');
    }
  });

  it('a LOYALTY_WAREHOUSE that is no DuckDB database (a file, a directory): 2', async () => {
    for (const command of ['status', 'run']) {
      expectOneLine(
        await runCli([command, '--config', jobs()], { LOYALTY_WAREHOUSE: '/etc/passwd' }),
        2,
        /^loyalty-etl: warehouse \/etc\/passwd cannot be opened as a DuckDB database: .*not a valid DuckDB database file/,
      );
    }
    const dir = testTempDir('not-a-file-');
    expectOneLine(
      await runCli(['run', '--config', jobs()], { LOYALTY_WAREHOUSE: dir }),
      2,
      /^loyalty-etl: warehouse .* cannot be opened as a DuckDB database: .*Is a directory/,
    );
  });

  it("the emulator's port in use, an unknown time zone: 2", async () => {
    expectOneLine(
      await runCli(['emulator', '--port', String(busyPort)]),
      2,
      new RegExp(
        `^loyalty-etl: cannot listen on 127\\.0\\.0\\.1:${busyPort}: the port is in use by another process \\(choose another with --port\\)$`,
      ),
    );
    expectOneLine(
      await runCli(['emulator', '--port', '0', '--timezone', 'Mars/Olympus_Mons']),
      2,
      /^loyalty-etl: --timezone: 'Mars\/Olympus_Mons' is no IANA time zone/,
    );
  });

  it('a webhook subscriber URL holding a user and password: 2, the password never shown', async () => {
    const result = await runCli(['emulator', '--port', '0', '--webhook', 'http://etl:hook-s3cret@127.0.0.1:1/hooks/x']);
    expectOneLine(result, 2, /^loyalty-etl: --webhook: a subscriber URL must not hold a user or password/);
    expect(result.stderr).not.toContain('hook-s3cret');
  });

  it('an unknown LOYALTY_LOG_LEVEL: 2, before anything is done', async () => {
    const warehouse = join(testTempDir('log-level-'), 'w.duckdb');
    expectOneLine(
      await runCli(['run', '--config', jobs()], { LOYALTY_LOG_LEVEL: 'verbose', LOYALTY_WAREHOUSE: warehouse }),
      2,
      /^loyalty-etl: LOYALTY_LOG_LEVEL: 'verbose' is no log level \(use one of .*debug.*\)$/,
    );
    expect(existsSync(warehouse)).toBe(false);
  });

  it('check, status, verify and catalog never create a warehouse: a missing DuckDB file is named, and nothing is made', async () => {
    const emulator = await startEmulator({ accounts: 5, endDate: '2024-01-31', port: 0 });
    try {
      const file = emulatorJobs({ url: emulator.url, timezone: 'Europe/Athens', firstDay: '2024-01-01' });
      const dir = join(testTempDir('typo-'), 'no', 'such');
      const warehouse = join(dir, 'w.duckdb');
      const commands = [
        ['status'],
        ['verify', '--from', '2024-01-01', '--to', '2024-01-02'],
        ['check'],
        ['catalog', '--format', 'json'],
      ];
      for (const args of commands) {
        const result = await runCli([...args, '--config', file], { LOYALTY_WAREHOUSE: warehouse });
        const missing = new RegExp(
          `^loyalty-etl: warehouse ${warehouse.replaceAll('/', '\\/')} does not exist; run \`loyalty-etl run\` to create it`,
        );
        expect(result.code, result.stderr).toBe(2);
        expect(result.stderr.trim().split('\n'), result.stderr).toEqual([expect.stringMatching(missing)]);
        if (args[0] === 'check') expect(result.stdout).toMatch(/^config ok: .*\nsource ok: /); // what check could check, it did
      }
      expect(existsSync(dir)).toBe(false);
    } finally {
      await emulator.close();
    }
  });

  it('a PostgreSQL database without the pipeline tables is not set up by status or catalog: 2', async () => {
    const { warehouse } = await postgresTestDestination.empty();
    for (const args of [['status'], ['catalog', '--format', 'dbt']]) {
      const result = await runCli([...args, '--config', jobs()], { LOYALTY_WAREHOUSE: warehouse });
      expectOneLine(
        result,
        2,
        /^loyalty-etl: warehouse postgres .* holds no loyalty-etl tables; run `loyalty-etl run` to create them/,
      );
      expect(result.stdout).toBe('');
    }
  });

  it('a directory that cannot be made: 2 at once', async () => {
    expectOneLine(
      await runCli(['run', '--config', jobs()], { LOYALTY_WAREHOUSE: '/proc/x/w.duckdb' }),
      2,
      /^loyalty-etl: warehouse \/proc\/x\/w\.duckdb: cannot create the directory \/proc\/x \(ENOENT\)$/,
    );
  });
});
