import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { openDestination } from '../../src/load/warehouses.js';
import { PostgresReader } from '../../src/load/postgres/postgres-reader.js';
import { emulatorJobs, runCli } from '../helpers/cli.js';
import { postgresTestDestination, testDestinations } from '../helpers/destinations.js';
import { keepAnalystsSchema } from '../helpers/analyst-reader.js';
import { testTempDir } from '../helpers/temp-dir.js';
import { withWarehouse } from '../helpers/warehouse-reader.js';
import { useEmulator } from '../helpers/suite-emulator.js';

const TZ = 'UTC';
const SECRET = '7c2f0e9d8b1a4c3e5f60718293a4b5c6d7';

describe('readers cannot hold the pipeline (PostgreSQL)', () => {
  const emulator = useEmulator({
    seed: 8,
    accounts: 8,
    startDate: '2024-03-01',
    endDate: '2024-03-03',
    timezone: TZ,
  });

  it('an advisory lock, a setting or a prepared statement taken at the sql prompt does not outlive its statement: the next run loads', async () => {
    const { config } = await postgresTestDestination.fresh();
    if (config.type !== 'postgres') throw new Error('PostgreSQL only');
    const file = emulatorJobs({ url: emulator.url, timezone: TZ, firstDay: '2024-03-02', destination: config });
    expect((await runCli(['run', '--config', file, '--until', '2024-03-02'])).code).toBe(0);
    const reader = await PostgresReader.open(config.url, config.schema);
    try {
      // the lock every run's migration check takes, held by a session left open at the prompt
      await reader.execute(`SELECT pg_advisory_lock(hashtext('${config.schema}._etl_migrations'))`);
      await reader.execute(`SELECT set_config('search_path', 'pg_catalog', false)`);
      await reader.execute(`PREPARE kept AS SELECT 1`);
      const after = await reader.execute(
        `SELECT current_setting('search_path') AS path, (SELECT COUNT(*) FROM pg_prepared_statements) AS prepared, (SELECT COUNT(*) FROM pg_locks WHERE locktype = 'advisory' AND pid = pg_backend_pid()) AS advisory`,
      );
      const rows: unknown[][] = [];
      for await (const batch of after.rows!) rows.push(...batch);
      expect(rows.map((r) => r.map(String))).toEqual([[expect.not.stringContaining('pg_catalog'), '0', '0']]);
      const run = await runCli(['run', '--config', file, '--until', '2024-03-03'], { LOYALTY_BUSY_TIMEOUT_S: '5' });
      expect(run.code, run.stderr.slice(-1500)).toBe(0);
    } finally {
      await reader.close();
    }
  });

  it('a session that holds a lock the run needs makes it wait its busy timeout, then exit 3 naming that session', async () => {
    const { config } = await postgresTestDestination.fresh();
    if (config.type !== 'postgres') throw new Error('PostgreSQL only');
    const file = emulatorJobs({ url: emulator.url, timezone: TZ, firstDay: '2024-03-02', destination: config });
    expect((await runCli(['run', '--config', file, '--until', '2024-03-02'])).code).toBe(0);
    const holder = new pg.Client({ connectionString: config.url, application_name: 'psql' });
    await holder.connect();
    try {
      await holder.query(`SELECT pg_advisory_lock(hashtext('${config.schema}._etl_migrations'))`);
      const [{ pid }] = (await holder.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows as [
        { pid: number },
      ];
      const run = await runCli(['run', '--config', file, '--until', '2024-03-03'], { LOYALTY_BUSY_TIMEOUT_S: '2' });
      expect(run.code).toBe(3);
      const lines = run.stderr.split('\n').filter((l) => l.startsWith('loyalty-etl: '));
      expect(lines).toEqual([
        expect.stringMatching(
          new RegExp(
            `^loyalty-etl: waited 2 s \\(destination\\.busy_timeout_s\\) for a lock on the warehouse postgres://.*, held by session pid ${pid} \\(user \\w+, application 'psql', .*holds advisory\\).*pg_terminate_backend\\(${pid}\\)`,
          ),
        ),
      ]);
      expect(run.stderr).not.toMatch(/^\s+at /m); // no stack trace

      // the lock the commits of a stream take turns on: the span's windows fail with the same line, and the run goes on to its end
      await holder.query(`SELECT pg_advisory_unlock_all()`);
      await holder.query(`SELECT pg_advisory_lock(hashtext('${config.schema}.accounts'))`);
      const held = await runCli(['run', '--config', file, '--until', '2024-03-03'], { LOYALTY_BUSY_TIMEOUT_S: '2' });
      expect(held.code, held.stderr.slice(-1500)).toBe(1);
      const errors = await withWarehouse(config, (conn) =>
        conn.all<{ error: string }>(`SELECT error FROM _etl_windows WHERE status = 'failed'`),
      );
      expect(errors.length).toBeGreaterThan(0);
      expect(errors[0]!.error).toMatch(new RegExp(`held by session pid ${pid} \\(user \\w+, application 'psql'`));
      await holder.query(`SELECT pg_advisory_unlock_all()`);
      expect((await runCli(['run', '--config', file, '--until', '2024-03-03'])).code).toBe(0);
    } finally {
      await holder.end();
    }
  });

  it('check and sql say when a role can do more than an analyst’s should', async () => {
    const { config } = await postgresTestDestination.fresh();
    if (config.type !== 'postgres') throw new Error('PostgreSQL only');
    const file = emulatorJobs({ url: emulator.url, timezone: TZ, firstDay: '2024-03-02', destination: config });
    expect((await runCli(['run', '--config', file, '--until', '2024-03-02'])).code).toBe(0);
    // the test server's role is a superuser
    const check = await runCli(['check', '--config', file]);
    expect(check.code, check.stderr).toBe(0);
    expect(check.stdout).toMatch(
      /^warning: the warehouse role \w+ is a superuser .*; the pipeline needs only to own its schema/m,
    );
    expect(check.stdout).toMatch(
      /^warning: loyalty-etl sql with this jobs file connects as \w+, which can write: analysts need a read-only role/m,
    );

    // an analyst's role that only reads is said nothing of; one that may end sessions is
    const admin = new pg.Client({ connectionString: config.url });
    await admin.connect();
    const role = `analyst_${Date.now()}`;
    try {
      await admin.query(`CREATE ROLE ${role} LOGIN PASSWORD 'secret-analyst'`);
      await admin.query(`GRANT USAGE ON SCHEMA ${config.schema} TO ${role}`);
      await admin.query(`GRANT SELECT ON ALL TABLES IN SCHEMA ${config.schema} TO ${role}`);
      const url = new URL(config.url);
      url.username = role;
      url.password = 'secret-analyst';
      const reads = await runCli(['sql', '--warehouse', url.toString(), '--csv', 'SELECT COUNT(*) AS n FROM accounts']);
      expect(reads.code, reads.stderr).toBe(0);
      expect(reads.stderr).toBe('');
      await admin.query(`GRANT pg_signal_backend TO ${role}`);
      const signals = await runCli(['sql', '--warehouse', url.toString(), '--csv', 'SELECT 1 AS one']);
      expect(signals.code).toBe(0);
      expect(signals.stderr).toMatch(
        new RegExp(
          `^warning: the role ${role} can end other sessions, the pipeline’s among them \\(pg_signal_backend\\)`,
        ),
      );
    } finally {
      await admin.query(`DROP OWNED BY ${role}`).catch(() => undefined);
      await admin.query(`DROP ROLE IF EXISTS ${role}`).catch(() => undefined);
      await admin.end();
    }
  });
});

describe.each(testDestinations)('setup mistakes and queries that look like flags ($name)', (target) => {
  it('sql takes a query that starts with a comment as a query', async () => {
    const { config } = await target.fresh();
    const file = emulatorJobs({ url: 'http://127.0.0.1:9', timezone: TZ, firstDay: '2024-03-02', destination: config });
    await (await openDestination(config)).close(); // the warehouse's tables, empty
    await keepAnalystsSchema(config); // and (PostgreSQL) the analysts' views of them, as a run makes
    const result = await runCli([
      'sql',
      '--config',
      file,
      '--csv',
      '-- how many customers\nSELECT COUNT(*) AS n FROM accounts',
    ]);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toBe('n\n0\n');
    const after = await runCli(['sql', '-- two flags after it\nSELECT 2 AS two', '--config', file, '--csv']);
    expect(after.stdout).toBe('two\n2\n');
    const unknown = await runCli(['sql', '--config', file, '--nonsense']);
    expect(unknown.code).toBe(2); // a word with no space is still an option, and an unknown one
  });

  if (target.name === 'duckdb') {
    it('an unusable spool folder is exit 2 with one line, for the receiver and for a run', async () => {
      const { config } = await target.fresh();
      const inTheWay = join(testTempDir('spool-'), 'events');
      writeFileSync(inTheWay, 'a file where the spool folder should be');
      const file = emulatorJobs({
        url: 'http://127.0.0.1:9',
        timezone: TZ,
        firstDay: '2024-03-02',
        destination: config,
      });
      writeFileSync(
        file,
        readFileSync(file, 'utf8').replace(/( {2}path: .*\n)/, `$1  event_spool: ${JSON.stringify(inTheWay)}\n`),
      );
      const receiver = await runCli(['webhook', '--config', file, '--port', '0'], { LOYALTY_WEBHOOK_SECRET: SECRET });
      expect(receiver.code).toBe(2);
      expect(receiver.stderr.split('\n').filter((l) => l !== '')).toEqual([
        expect.stringMatching(
          new RegExp(
            `^loyalty-etl: webhook spool ${inTheWay} cannot be made or read \\(E\\w+.*\\); check destination\\.event_spool`,
          ),
        ),
      ]);
      const run = await runCli(['run', '--config', file, '--until', '2024-03-02']);
      expect(run.code).toBe(2);
      expect(run.stderr.split('\n').filter((l) => l.startsWith('loyalty-etl: '))).toEqual([
        expect.stringMatching(new RegExp(`^loyalty-etl: webhook spool ${inTheWay} cannot be read \\(ENOTDIR`)),
      ]);
      expect(run.stderr).not.toMatch(/^\s+at /m);
    });
  }
});
