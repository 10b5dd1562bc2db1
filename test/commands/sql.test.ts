import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { runSqlPrompt } from '../../src/commands/sql-prompt.js';
import type { DestinationSettings } from '../../src/plan/job-plan.js';
import { DuckDbReader } from '../../src/load/duckdb/duckdb-reader.js';
import { PostgresReader } from '../../src/load/postgres/postgres-reader.js';
import type { WarehouseReader } from '../../src/load/warehouse/warehouse-reader.js';
import { runCli, writeJobsFile } from '../helpers/cli.js';
import { testDestinations } from '../helpers/destinations.js';
import { withWarehouse } from '../helpers/warehouse-reader.js';
import { keepAnalystsSchema } from '../helpers/analyst-reader.js';

/** A jobs file for `config`; the source is never reached by `sql` or `publish`. */
function jobsFor(config: DestinationSettings): string {
  const destination =
    config.type === 'duckdb'
      ? `  type: duckdb\n  path: ${JSON.stringify(config.path)}\n  analysts:\n    personal_data: keep`
      : `  type: postgres\n  url: ${JSON.stringify(config.url)}\n  schema: ${config.schema}`;
  return writeJobsFile(
    `source:\n  base_url: http://127.0.0.1:9\ndestination:\n${destination}\njobs:\n  nightly:\n    streams: [accounts]\n    first_day: 2024-01-01\n`,
  );
}

/** Three customers, one of them with no city. */
async function seed(config: DestinationSettings): Promise<void> {
  await withWarehouse(config, async (conn) => {
    for (const [id, city] of [
      ['C1', 'Αθήνα'],
      ['C2', null],
      ['C3', 'Pátra, "west"'],
    ]) {
      await conn.run(
        `INSERT INTO ${conn.schemaSql}.accounts (customer_id, city, birthdate, _window_start, _run_id, _loaded_at) VALUES ($1, $2, CAST('1990-05-17' AS DATE), CAST('2024-01-01' AS DATE), 'r', CAST('2024-01-02T03:04:05Z' AS TIMESTAMPTZ))`,
        [id, city],
      );
    }
  });
}

const customerCount = (config: DestinationSettings) =>
  withWarehouse(config, async (conn) =>
    Number((await conn.all<{ n: number | string }>(`SELECT COUNT(*) AS n FROM ${conn.schemaSql}.accounts`))[0]!.n),
  );

const QUERY = 'SELECT customer_id, city, birthdate, _loaded_at FROM accounts ORDER BY customer_id';

describe.each(testDestinations)('loyalty-etl sql on $name', (target) => {
  /** A seeded warehouse, its jobs file, and (DuckDB) its copy published for readers. */
  async function warehouse() {
    const { config } = await target.fresh();
    await seed(config);
    await keepAnalystsSchema(config);
    const file = jobsFor(config);
    if (target.name === 'duckdb') expect((await runCli(['publish', '--config', file])).code).toBe(0);
    return { config, file };
  }

  it('prints a query as a table, CSV or JSON', async () => {
    const { file } = await warehouse();
    const asTable = await runCli(['sql', '--config', file, QUERY]);
    expect(asTable.code, asTable.stderr).toBe(0);
    expect(asTable.stdout).toBe(
      [
        'customer_id  city           birthdate   _loaded_at',
        'C1           Αθήνα          1990-05-17  2024-01-02 03:04:05+00',
        'C2           NULL           1990-05-17  2024-01-02 03:04:05+00',
        'C3           Pátra, "west"  1990-05-17  2024-01-02 03:04:05+00',
        '(3 rows)',
        '',
      ].join('\n'),
    );
    const asCsv = await runCli(['sql', '--config', file, '--csv', QUERY]);
    expect(asCsv.stdout).toBe(
      'customer_id,city,birthdate,_loaded_at\nC1,Αθήνα,1990-05-17,2024-01-02 03:04:05+00\nC2,,1990-05-17,2024-01-02 03:04:05+00\nC3,"Pátra, ""west""",1990-05-17,2024-01-02 03:04:05+00\n',
    );
    const asJson = await runCli(['sql', '--config', file, '--json', `${QUERY} LIMIT 2`]);
    expect(JSON.parse(asJson.stdout)).toEqual([
      { customer_id: 'C1', city: 'Αθήνα', birthdate: '1990-05-17', _loaded_at: '2024-01-02 03:04:05+00' },
      { customer_id: 'C2', city: null, birthdate: '1990-05-17', _loaded_at: '2024-01-02 03:04:05+00' },
    ]);
    const capped = await runCli(['sql', '--config', file, '--max-rows', '2', QUERY]);
    expect(capped.stdout).toMatch(
      /\nC2 .*\n\(the first 2 rows; there are more: add LIMIT, raise --max-rows, or use --csv or --json for every row\)\n$/,
    );
  });

  it('refuses every write with exit 2 and one line, however it is dressed up, and the warehouse is unchanged', async () => {
    const { config, file } = await warehouse();
    const attempts =
      target.name === 'duckdb'
        ? [
            'DELETE FROM accounts',
            "UPDATE accounts SET city = 'x'",
            'DROP TABLE accounts',
            "COPY accounts TO '/tmp/loyalty-accounts.csv'",
            `ATTACH '${config.type === 'duckdb' ? config.path : ''}' AS w (READ_WRITE)`,
            'SET access_mode = read_write',
          ]
        : [
            'DELETE FROM accounts',
            'SET default_transaction_read_only = off; DELETE FROM accounts',
            'COMMIT; DELETE FROM accounts',
            'BEGIN READ WRITE; DELETE FROM accounts',
            "SET SESSION CHARACTERISTICS AS TRANSACTION READ WRITE; UPDATE accounts SET city = 'x'",
          ];
    for (const sql of attempts) {
      const result = await runCli(['sql', '--config', file, sql]);
      expect(result.code, `${sql}: ${result.stderr}`).toBe(2);
      const lines = result.stderr.split('\n').filter((l) => l !== '' && !l.startsWith('warning: the role ')); // the test's role may write: said, not refused
      expect(lines, sql).toEqual([
        expect.stringMatching(/^loyalty-etl: sql: (the warehouse is open read-only|the SQL prompt)/),
      ]);
    }
    // the published copy and the warehouse both still hold every customer
    expect((await runCli(['sql', '--config', file, '--csv', 'SELECT COUNT(*) AS n FROM accounts'])).stdout).toBe(
      'n\n3\n',
    );
    expect(await customerCount(config)).toBe(3);
  });

  it('runs a script from stdin, and says which statement failed', async () => {
    const { file } = await warehouse();
    const ok = await runCli([
      'sql',
      '--config',
      file,
      '--csv',
      "SELECT 1 AS a; -- a comment; with a semicolon\nSELECT ';' AS b;",
    ]);
    expect(ok.stdout).toBe('a\n1\nb\n;\n');
    const bad = await runCli(['sql', '--config', file, 'SELECT 1; SELECT nope FROM accounts']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/^loyalty-etl: sql: .*nope.* \(statement 2 of 2\)\n$/m);
  });

  it('an interactive session: statements over several lines, output modes, errors that do not end it', async () => {
    const { config } = await warehouse();
    const reader: WarehouseReader =
      config.type === 'duckdb'
        ? await DuckDbReader.open(config.path.replace(/\.duckdb$/, '.published.duckdb'))
        : await PostgresReader.open(config.url, config.schema);
    const input = new PassThrough();
    const output = new PassThrough();
    let printed = '';
    output.on('data', (d) => (printed += String(d)));
    try {
      const session = runSqlPrompt(reader, { input, output, terminal: false, format: 'table', maxRows: 100 });
      input.end(
        [
          'SELECT customer_id',
          '  FROM accounts',
          ' WHERE city IS NULL;',
          'SELECT nope;',
          '.mode csv',
          "SELECT COUNT(*) AS n FROM accounts; SELECT 'x;y' AS s;",
          'DELETE FROM accounts;',
          '.quit',
          'SELECT 1;',
        ].join('\n'),
      );
      await session;
    } finally {
      await reader.close();
    }
    expect(printed).toContain(`${reader.describe()}; statements end with ;  .help for help\n`);
    expect(printed).toContain('customer_id\nC2\n(1 row)\n');
    expect(printed).toMatch(/error: .*nope/);
    expect(printed).toContain('n\n3\ns\nx;y\n');
    expect(printed).toContain('error: the warehouse is open read-only: ');
    expect(printed).not.toContain('1\n(1 row)'); // nothing after .quit
    expect(await customerCount(config)).toBe(3);
  });

  it("--pipeline reads the pipeline's own tables and says they hold personal data in clear; never with --warehouse", async () => {
    const { config, file } = await warehouse();
    const result = await runCli([
      'sql',
      '--config',
      file,
      '--pipeline',
      '--csv',
      'SELECT COUNT(*) AS n FROM _etl_migrations',
    ]);
    expect(result.code, result.stderr).toBe(0);
    expect(Number(result.stdout.split('\n')[1])).toBeGreaterThan(0);
    expect(result.stderr).toMatch(
      new RegExp(
        `^note: reading the pipeline's own ${target.name === 'duckdb' ? 'file' : `schema ${config.schema}`}.*: its tables hold personal data in clear`,
        'm',
      ),
    );
    const both = await runCli(['sql', '--warehouse', 'x.duckdb', '--pipeline', 'SELECT 1']);
    expect(both.code).toBe(2);
    expect(both.stderr).toMatch(/^loyalty-etl: sql: --pipeline reads the jobs file's warehouse/);
  });

  if (target.name === 'postgres')
    it("opens the analysts' schema, not the pipeline's; before a run has made it, says so (exit 2)", async () => {
      const { config } = await target.fresh();
      await seed(config);
      const file = jobsFor(config);
      const before = await runCli(['sql', '--config', file, '--csv', 'SELECT COUNT(*) AS n FROM accounts']);
      expect(before.code).toBe(2);
      expect(before.stderr.trim().split('\n').at(-1)).toMatch(
        /^loyalty-etl: sql: the analysts' schema \S+_analysts does not exist yet/,
      );
      await keepAnalystsSchema(config);
      const where = await runCli(['sql', '--config', file, '--csv', 'SELECT current_schema() AS s']);
      expect(where.stdout).toBe(`s\n${config.type === 'postgres' ? config.schema : ''}_analysts\n`);
    });

  if (target.name === 'duckdb') {
    it('without a published copy reads the warehouse file itself, read-only, and says so', async () => {
      const { config } = await target.fresh();
      await seed(config);
      const result = await runCli(['sql', '--config', jobsFor(config), '--csv', 'SELECT COUNT(*) AS n FROM accounts']);
      expect(result.code, result.stderr).toBe(0);
      expect(result.stdout).toBe('n\n3\n');
      expect(result.stderr).toMatch(
        /^note: no copy is published at .*\.published\.duckdb yet \(a run or `loyalty-etl publish` makes one\); reading the warehouse file .* itself: while this session is open, runs wait for it\n$/,
      );
    });
  }
});
