import { chmodSync, copyFileSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { DuckDBConnection } from '@duckdb/node-api';
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { rewriteForAnalysts } from '../../src/load/duckdb/analyst-copy.js';
import { withDuckDb } from '../../src/load/duckdb/duckdb-connection.js';
import type { AnalystsPolicy } from '../../src/plan/job-plan.js';
import { emulatorJobs, runCli, type CliResult } from '../helpers/cli.js';
import { duckdbTestDestination } from '../helpers/destinations.js';
import { testTempDir } from '../helpers/temp-dir.js';
import { useEmulator } from '../helpers/suite-emulator.js';

const TZ = 'Europe/Athens';
const FIRST = '2024-04-01';
const SALT = 'the salt of this suite';
const OTHER_SALT = 'another salt';

const keyOf = (salt: string) => createHash('sha256').update(`loyalty-etl personal data\n${salt}`).digest('hex');

/** Runs `fn` on a DuckDB file of its own (read-only unless `write`). */
function onFile<T>(file: string, fn: (conn: DuckDBConnection) => Promise<T>, write = false): Promise<T> {
  return withDuckDb(file, write ? {} : { access_mode: 'READ_ONLY' }, fn);
}

const all = async (conn: DuckDBConnection, sql: string) =>
  (await conn.runAndReadAll(sql)).getRowObjectsJson() as Array<Record<string, unknown>>;

/**
 * Where two copies differ, in words (an empty list when they are equal): every table's rows as a multiset, and the
 * catalog (tables' DDL and comments, columns and their comments, views, macros).
 */
function differences(a: string, b: string): Promise<string[]> {
  return withDuckDb(':memory:', {}, async (conn) => {
    await conn.run(`ATTACH '${a}' AS a (READ_ONLY)`);
    await conn.run(`ATTACH '${b}' AS b (READ_ONLY)`);
    const out: string[] = [];
    const catalog = (db: string) => `
      SELECT 'table ' || schema_name || '.' || table_name AS what, sql AS text, comment FROM duckdb_tables() WHERE database_name = '${db}'
      UNION ALL SELECT 'view ' || schema_name || '.' || view_name, sql, comment FROM duckdb_views() WHERE database_name = '${db}' AND NOT internal
      UNION ALL SELECT 'column ' || schema_name || '.' || table_name || '.' || column_name || ' #' || column_index, data_type || ' ' || is_nullable, comment FROM duckdb_columns() WHERE database_name = '${db}'
      UNION ALL SELECT 'macro ' || schema_name || '.' || function_name, macro_definition, comment FROM duckdb_functions() WHERE database_name = '${db}' AND NOT internal`;
    for (const [x, y] of [
      ['a', 'b'],
      ['b', 'a'],
    ] as const)
      for (const row of await all(conn, `(${catalog(x)}) EXCEPT (${catalog(y)})`))
        out.push(`only in ${x === 'a' ? 'the incremental copy' : 'the full rewrite'}: ${String(row.what)}`);
    const tables = await all(
      conn,
      `SELECT schema_name, table_name FROM duckdb_tables() WHERE database_name = 'a'
       INTERSECT SELECT schema_name, table_name FROM duckdb_tables() WHERE database_name = 'b'`,
    );
    // Every table's rows as multisets, all tables in one statement: each row counted +1 in a and -1 in b, grouped by
    // every column (NULLs as equal, as EXCEPT ALL takes them); a group left above zero holds rows only in a, below zero
    // rows only in b. Two EXCEPT ALL a table, one statement each, made a comparison cost half a second.
    const names = tables.map((t) => `"${String(t.schema_name)}"."${String(t.table_name)}"`);
    const counts = names.length
      ? await all(
          conn,
          names
            .map(
              (name, i) =>
                `SELECT ${i} AS i, COALESCE(SUM("__n") FILTER (WHERE "__n" > 0), 0) AS only_a,
                        COALESCE(-SUM("__n") FILTER (WHERE "__n" < 0), 0) AS only_b
                   FROM (SELECT * EXCLUDE ("__side"), SUM("__side") AS "__n"
                           FROM (SELECT *, 1 AS "__side" FROM a.${name} UNION ALL SELECT *, -1 FROM b.${name})
                          GROUP BY ALL)`,
            )
            .join(' UNION ALL '),
        )
      : [];
    expect(counts).toHaveLength(names.length);
    for (const row of counts.sort((x, y) => Number(x.i) - Number(y.i)))
      if (Number(row.only_a) + Number(row.only_b) > 0)
        out.push(
          `${names[Number(row.i)]}: ${String(row.only_a)} rows only in the incremental copy, ${String(row.only_b)} only in the full rewrite`,
        );
    return out;
  });
}

/** The info lines a command logged about its publish. */
function publishLog(result: CliResult): { published?: Record<string, unknown>; whole?: Record<string, unknown> } {
  const lines = result.stderr
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Record<string, unknown>);
  return {
    published: lines.find((l) => l.msg === 'published the read-only copy of the warehouse for analysts'),
    whole: lines.find((l) => String(l.msg).startsWith('the copy for analysts was written whole')),
  };
}

describe('the analysts’ copy of a DuckDB warehouse, published incrementally', () => {
  const emulator = useEmulator({
    seed: 38,
    accounts: 30,
    startDate: FIRST,
    endDate: '2024-04-12',
    timezone: TZ,
    port: 0,
  });

  it('equals, table by table and row by row, a full rewrite of the same warehouse after every kind of change', async () => {
    const { config } = await duckdbTestDestination.fresh();
    if (config.type !== 'duckdb') throw new Error('a DuckDB warehouse');
    const warehouse = config.path;
    const published = warehouse.replace(/\.duckdb$/, '.published.duckdb');
    const jobs = (streams: string[], personalData: 'hash' | 'drop' = 'hash') =>
      emulatorJobs({
        url: emulator.url,
        timezone: TZ,
        firstDay: FIRST,
        destination: { ...config, analysts: { personal_data: personalData } },
        streams,
      });
    const env = { LOYALTY_PII_SALT: SALT };
    const policy: AnalystsPolicy = { personalData: 'hash', key: keyOf(SALT) };

    /** The published copy against a full rewrite of the warehouse as it is now, under `expected`. */
    async function expectEqualToFullRewrite(step: string, expected: AnalystsPolicy = policy) {
      const full = join(testTempDir('full-rewrite-'), 'full.duckdb');
      copyFileSync(warehouse, full);
      const how = await rewriteForAnalysts(full, expected);
      expect(how?.how, step).toBe('whole');
      expect(await differences(published, full), step).toEqual([]);
    }
    /** Runs a command that publishes; returns what its publish logged. */
    async function publishing(args: string[], environment: Record<string, string> = env) {
      const result = await runCli(args, environment);
      expect(result.code, result.stderr.slice(-1500)).toBe(0);
      const log = publishLog(result);
      expect(log.published, 'the publish is logged').toBeDefined();
      return log;
    }
    /** Writes to the warehouse the way any other writer would (an operator's SQL, a fix by hand). */
    const byHand = (sql: string[]) =>
      onFile(
        warehouse,
        async (conn) => {
          for (const statement of sql) await conn.run(statement);
        },
        true,
      );

    // the first night: no copy before, written whole
    let log = await publishing(['run', '--config', jobs(['accounts', 'loyalty_postings']), '--until', '2024-04-04']);
    expect(log.published!.rewrite).toBe('whole');
    expect(String(log.whole!.why)).toMatch(/no copy was published before/);
    await expectEqualToFullRewrite('first night');

    // a night of accounts only: the postings are not written again
    log = await publishing(['run', '--config', jobs(['accounts']), '--until', '2024-04-06']);
    expect(log.published!.rewrite).toBe('incremental');
    expect(log.whole).toBeUndefined();
    expect(Number(log.published!.tablesWritten)).toBeLessThan(Number(log.published!.tables));
    await expectEqualToFullRewrite('a night of accounts');

    // postings only
    log = await publishing([
      'backfill',
      '--config',
      jobs(['accounts', 'loyalty_postings']),
      '--stream',
      'loyalty_postings',
      '--from',
      '2024-04-05',
      '--to',
      '2024-04-08',
    ]);
    expect(log.published!.rewrite).toBe('incremental');
    await expectEqualToFullRewrite('postings only');

    // a backfill that loads again days already loaded
    log = await publishing([
      'backfill',
      '--config',
      jobs(['accounts', 'loyalty_postings']),
      '--from',
      '2024-04-02',
      '--to',
      '2024-04-05',
      '--restart',
    ]);
    await expectEqualToFullRewrite('a backfill of loaded days');

    // writers the pipeline knows nothing of: one value changed (the row count the same), a row deleted and one
    // inserted in its place that differs, two equal rows where there was one
    await byHand([
      `UPDATE accounts SET city = 'Nowhere' WHERE customer_id = (SELECT MIN(customer_id) FROM accounts)`,
      `UPDATE loyalty_postings SET credit = COALESCE(credit, 0) + 1 WHERE rowid = (SELECT MIN(rowid) FROM loyalty_postings)`,
      // a row moved to another window: both windows written again
      `UPDATE loyalty_postings SET _window_start = _window_start + 1 WHERE rowid = (SELECT MAX(rowid) FROM loyalty_postings)`,
    ]);
    log = await publishing(['publish', '--config', jobs(['accounts'])]);
    expect(log.published!.rewrite).toBe('incremental');
    expect(Number(log.published!.tablesWritten)).toBe(2);
    // only the windows that changed: fewer rows than the two tables hold
    const held = await onFile(warehouse, (conn) =>
      all(conn, `SELECT (SELECT COUNT(*) FROM accounts) + (SELECT COUNT(*) FROM loyalty_postings) AS n`),
    );
    expect(Number(log.published!.rowsWritten)).toBeLessThan(Number(held[0]!.n));
    await expectEqualToFullRewrite('one value changed by hand in two tables, a row moved to another window');

    // the same count: one row gone, another twice
    await byHand([
      `DELETE FROM account_custom_fields WHERE rowid = (SELECT MAX(rowid) FROM account_custom_fields)`,
      `INSERT INTO account_custom_fields SELECT * FROM account_custom_fields WHERE rowid = (SELECT MIN(rowid) FROM account_custom_fields)`,
    ]);
    log = await publishing(['publish', '--config', jobs(['accounts'])]);
    expect(Number(log.published!.tablesWritten)).toBe(1);
    await expectEqualToFullRewrite('a duplicated row and a deleted one');

    // nothing changed: nothing written
    log = await publishing(['publish', '--config', jobs(['accounts'])]);
    expect([log.published!.rewrite, log.published!.tablesWritten]).toEqual(['incremental', 0]);
    await expectEqualToFullRewrite('nothing changed');

    // a table made, then gone: made, the copy is written whole; gone, it is dropped from the copy
    await byHand([
      `CREATE TABLE scratch_notes (note VARCHAR, phone VARCHAR)`,
      `INSERT INTO scratch_notes VALUES ('x', '+30 210 000')`,
    ]);
    log = await publishing(['publish', '--config', jobs(['accounts'])]);
    expect(String(log.whole?.why)).toMatch(/scratch_notes is new/);
    await expectEqualToFullRewrite('a table made');
    await byHand([`DROP TABLE scratch_notes`]);
    log = await publishing(['publish', '--config', jobs(['accounts'])]);
    expect([log.published!.rewrite, log.published!.tablesDropped]).toEqual(['incremental', ['main.scratch_notes']]);
    await expectEqualToFullRewrite('a table dropped');

    // a column added, as a migration or a new custom field does
    await byHand([`ALTER TABLE accounts ADD COLUMN cf_added VARCHAR`, `UPDATE accounts SET cf_added = customer_id`]);
    log = await publishing(['run', '--config', jobs(['accounts']), '--until', '2024-04-09']);
    expect(String(log.whole?.why)).toMatch(/accounts changed its columns|views, macros/);
    await expectEqualToFullRewrite('a column added');

    // another policy, another key: written whole
    log = await publishing(['publish', '--config', jobs(['accounts'], 'drop')]);
    expect(String(log.whole?.why)).toMatch(/personal_data: hash, now drop/);
    await expectEqualToFullRewrite('personal data dropped', { personalData: 'drop' });
    log = await publishing(['run', '--config', jobs(['accounts'], 'drop'), '--until', '2024-04-10']);
    expect(log.published!.rewrite).toBe('incremental');
    await expectEqualToFullRewrite('a night under drop', { personalData: 'drop' });
    log = await publishing(['publish', '--config', jobs(['accounts'])]);
    expect(String(log.whole?.why)).toMatch(/personal_data: drop, now hash/);
    await expectEqualToFullRewrite('hashed again');
    log = await publishing(['publish', '--config', jobs(['accounts'])], { LOYALTY_PII_SALT: OTHER_SALT });
    expect(String(log.whole?.why)).toMatch(/another key/);
    await expectEqualToFullRewrite('another key', { personalData: 'hash', key: keyOf(OTHER_SALT) });
    // under keep the copy is the warehouse's file: the next copy that withholds personal data starts afresh
    const keep = emulatorJobs({
      url: emulator.url,
      timezone: TZ,
      firstDay: FIRST,
      destination: { ...config, analysts: { personal_data: 'keep' } },
    });
    await publishing(['publish', '--config', keep], {});
    log = await publishing(['run', '--config', jobs(['accounts', 'loyalty_postings']), '--until', '2024-04-11']);
    // (a copy under keep is the warehouse's file less the pipeline's tables, whose blocks it may keep free)
    expect(String(log.whole?.why)).toMatch(/does not say what it was written from|more free space than data/);
    await expectEqualToFullRewrite('after a copy that keeps personal data');

    // the copy never held the clear phone numbers of the warehouse
    const phones = await onFile(warehouse, (conn) =>
      all(conn, `SELECT DISTINCT phone FROM accounts WHERE phone IS NOT NULL`),
    );
    expect(phones.length).toBeGreaterThan(0);
    const bytes = readFileSync(published);
    for (const { phone } of phones) expect(bytes.includes(Buffer.from(String(phone))), String(phone)).toBe(false);
  }, 600_000);

  it('a missing or unreadable previous copy is written whole, said at info, and the command succeeds', async () => {
    const { config } = await duckdbTestDestination.fresh();
    if (config.type !== 'duckdb') throw new Error('a DuckDB warehouse');
    const published = config.path.replace(/\.duckdb$/, '.published.duckdb');
    const file = emulatorJobs({ url: emulator.url, timezone: TZ, firstDay: FIRST, destination: config });
    const env = { LOYALTY_PII_SALT: SALT };
    const first = await runCli(['run', '--config', file, '--until', '2024-04-03'], env);
    expect(first.code, first.stderr.slice(-1500)).toBe(0);

    for (const [what, spoil, why] of [
      ['missing', () => rmSync(published), /no copy was published before/],
      ['not a database', () => writeFileSync(published, 'not a DuckDB file at all'), /cannot be opened/],
      [
        'cut short',
        () => {
          const bytes = readFileSync(published);
          writeFileSync(published, bytes.subarray(0, Math.floor(bytes.length / 3)));
        },
        /previous copy/,
      ],
    ] as const) {
      try {
        chmodSync(published, 0o600);
      } catch {
        // missing
      }
      spoil();
      const result = await runCli(['publish', '--config', file], env);
      expect(result.code, `${what}: ${result.stderr.slice(-1500)}`).toBe(0);
      const log = publishLog(result);
      expect(log.whole, what).toBeDefined();
      expect(log.whole!.level, what).toBe('info');
      expect(String(log.whole!.why), what).toMatch(why);
      expect(log.published!.rewrite, what).toBe('whole');
      expect(result.stdout, what).toMatch(/published for readers: .*every table written\)/);
      const full = join(testTempDir('full-rewrite-'), 'full.duckdb');
      copyFileSync(config.path, full);
      await rewriteForAnalysts(full, { personalData: 'hash', key: keyOf(SALT) });
      expect(await differences(published, full), what).toEqual([]);
    }
  }, 300_000);
});
