import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator, type Emulator } from '../../src/emulator/index.js';
import type { DestinationSettings } from '../../src/plan/job-plan.js';
import { emulatorJobs, runCli } from '../helpers/cli.js';
import { testDestinations } from '../helpers/destinations.js';
import { asAnalyst } from '../helpers/analyst-reader.js';

const TZ = 'Europe/Athens';
const START = '2024-03-01';
const END = '2024-03-05';
const SALT = 'a salt for this suite';
const HEX = /^[0-9a-f]{64}$/;

/** The tables and views analysts see, with the type and description of each of their columns. */
async function seen(config: DestinationSettings) {
  return asAnalyst(config, (conn) =>
    conn.all<{ relation: string; column_name: string; type: string; description: string | null }>(
      config.type === 'duckdb'
        ? `SELECT table_name AS relation, column_name, data_type AS type, comment AS description FROM duckdb_columns()
            WHERE database_name = current_database() AND schema_name = 'main'`
        : `SELECT c.relname AS relation, a.attname AS column_name, format_type(a.atttypid, a.atttypmod) AS type,
                  col_description(c.oid, a.attnum) AS description
             FROM pg_class c JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
            WHERE c.relnamespace = CAST(current_schema() AS regnamespace) AND c.relkind IN ('r', 'v')`,
    ),
  );
}

describe.each(testDestinations)('analysts read data, not bookkeeping, on $name', (target) => {
  let emulator: Emulator;
  beforeAll(async () => {
    emulator = await startEmulator({ seed: 9, accounts: 30, startDate: START, endDate: END, timezone: TZ, port: 0 });
  });
  afterAll(async () => emulator?.close());

  function jobsFor(config: DestinationSettings, pipelineTables?: boolean): string {
    const destination = {
      ...config,
      analysts: { personal_data: 'hash', ...(pipelineTables === undefined ? {} : { pipeline_tables: pipelineTables }) },
    } as DestinationSettings;
    return emulatorJobs({
      url: emulator.url,
      timezone: TZ,
      firstDay: START,
      destination,
      streams: ['accounts', 'surveys'],
    });
  }

  it("leaves the pipeline's tables out of what analysts read and out of the catalog; status, verify and sql --pipeline still reach them; hashed columns say they are text", async () => {
    const { config } = await target.fresh();
    const env = { LOYALTY_PII_SALT: SALT };
    const file = jobsFor(config);
    const loaded = await runCli(['backfill', '--config', file, '--from', START, '--to', END], env);
    expect(loaded.code, loaded.stderr.slice(-800)).toBe(0);

    const columns = await seen(config);
    const relations = new Set(columns.map((c) => c.relation));
    expect(relations.has('accounts')).toBe(true);
    // DuckDB's copy keeps only what its views read; PostgreSQL's views read the warehouse's own schema
    const pipeline = [...relations].filter((r) => r.startsWith('_etl_')).sort();
    expect(pipeline).toEqual(target.name === 'duckdb' ? ['_etl_columns', '_etl_typed_values'] : []);
    // under hash a birthdate is text, and its description says what it holds
    const birthdate = columns.find((c) => c.relation === 'accounts' && c.column_name === 'birthdate')!;
    expect(birthdate.type).toMatch(/^(VARCHAR|text)$/);
    expect(birthdate.description).toMatch(/Here: SHA-256 of the salted value as text/);
    // the view that reads it answers, and says the same
    const typed = await asAnalyst(config, (conn) =>
      conn.all<{ birthdate: string | null }>(
        'SELECT birthdate FROM accounts_typed WHERE birthdate IS NOT NULL LIMIT 3',
      ),
    );
    expect(typed.length).toBeGreaterThan(0);
    expect(typed.every((r) => HEX.test(r.birthdate!))).toBe(true);
    expect(columns.find((c) => c.relation === 'accounts_typed' && c.column_name === 'birthdate')).toMatchObject({
      type: birthdate.type,
      description: expect.stringMatching(/Here: SHA-256 of the salted value as text/),
    });

    // the catalog and dbt sources describe the same: the data, a hash as text
    const catalog = await runCli(['catalog', '--config', file, '--format', 'json'], env);
    expect(catalog.code, catalog.stderr).toBe(0);
    const described = JSON.parse(catalog.stdout) as {
      tables: Array<{ name: string; columns: Array<{ name: string; type: string; description: string }> }>;
    };
    expect(described.tables.filter((t) => t.name.startsWith('_etl_')).map((t) => t.name)).toEqual([]);
    const accounts = described.tables.find((t) => t.name === 'accounts')!;
    expect(accounts.columns.find((c) => c.name === 'birthdate')).toMatchObject({
      type: birthdate.type,
      description: expect.stringMatching(/SHA-256/),
    });
    const dbt = await runCli(['catalog', '--config', file, '--format', 'dbt'], env);
    expect(dbt.stdout).not.toMatch(/name: _etl_/);

    // sql reads where analysts read (hashes); --pipeline the pipeline's own, in clear, and says so
    const analystSql = await runCli(
      ['sql', '--config', file, '--csv', 'SELECT phone FROM accounts WHERE phone IS NOT NULL'],
      env,
    );
    expect(analystSql.code, analystSql.stderr).toBe(0);
    const phones = analystSql.stdout.trim().split('\n').slice(1);
    expect(phones.length).toBeGreaterThan(0);
    expect(phones.every((p) => HEX.test(p))).toBe(true);
    const refused = await runCli(['sql', '--config', file, '--csv', 'SELECT COUNT(*) AS n FROM _etl_runs'], env);
    expect(refused.code).toBe(2);
    const operator = await runCli(
      ['sql', '--config', file, '--pipeline', '--csv', 'SELECT phone FROM accounts WHERE phone IS NOT NULL'],
      env,
    );
    expect(operator.code, operator.stderr).toBe(0);
    expect(
      operator.stdout
        .trim()
        .split('\n')
        .slice(1)
        .some((p) => !HEX.test(p)),
    ).toBe(true);
    expect(operator.stderr).toMatch(/^note: reading the pipeline's own .*personal data in clear/m);
    const runs = await runCli(
      ['sql', '--config', file, '--pipeline', '--csv', 'SELECT COUNT(*) AS n FROM _etl_runs'],
      env,
    );
    expect(runs.stdout).toBe('n\n1\n');

    for (const args of [['status'], ['verify', '--from', START, '--to', END, '--stream', 'accounts']]) {
      const result = await runCli([...args, '--config', file], env);
      expect(result.code, `${args[0]}: ${result.stderr}`).toBe(0);
    }

    // asked for, they are there (hashed as the rest); left out again, they go
    const publishing = await runCli(['publish', '--config', jobsFor(config, true)], env);
    if (target.name === 'postgres')
      await runCli(['backfill', '--config', jobsFor(config, true), '--from', START, '--to', START, '--restart'], env);
    else expect(publishing.code, publishing.stderr).toBe(0);
    const asked = new Set((await seen(config)).map((c) => c.relation));
    expect(asked.has('_etl_runs')).toBe(true);
    // the key of the hashes never, whatever is asked
    expect(asked.has('_etl_pii_key')).toBe(false);
    if (target.name === 'postgres')
      await runCli(['backfill', '--config', file, '--from', START, '--to', START, '--restart'], env);
    else await runCli(['publish', '--config', file], env);
    expect(new Set((await seen(config)).map((c) => c.relation)).has('_etl_runs')).toBe(false);
  }, 240_000);
});
