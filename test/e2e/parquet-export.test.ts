import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { describe, expect, it } from 'vitest';
import type { ExportManifest } from '../../src/load/export/parquet-export.js';
import { quoteIdent, quoteLiteral } from '../../src/load/warehouse/identifiers.js';
import type { DestinationSettings } from '../../src/plan/job-plan.js';
import { emulatorJobs, runCli } from '../helpers/cli.js';
import { testDestinations } from '../helpers/destinations.js';
import { testTempDir } from '../helpers/temp-dir.js';
import { withWarehouse } from '../helpers/warehouse-reader.js';
import { useEmulator } from '../helpers/suite-emulator.js';

const TZ = 'Europe/Athens';
/** Three months of program: the first run loads April and May, the second adds June. */
const PROGRAM = { start: '2024-04-01', end: '2024-06-20' };
const FIRST_UNTIL = '2024-05-31';
/** An export in clear, asked for explicitly: the files equal the warehouse's rows. */
const CLEAR = ['--personal-data', 'keep'];
const SALT = 'test salt'; // vitest.config.ts
const PERSONAL = ['phone', 'email', 'first_name', 'last_name', 'birthdate'];

/** Every exported table read back from its Parquet files, one canonical text per row (multiset, sorted). */
async function readBack(dir: string, manifest: ExportManifest): Promise<Map<string, string[]>> {
  const instance = await DuckDBInstance.create(':memory:');
  const conn = await instance.connect();
  await conn.run(`SET TimeZone = 'UTC'`);
  const tables = new Map<string, string[]>();
  try {
    for (const table of manifest.tables) {
      if (table.files.length === 0) {
        tables.set(table.name, []);
        continue;
      }
      const source = `read_parquet(${quoteLiteral(join(dir, table.name, '**', '*.parquet'))}, hive_partitioning = ${table.partitionedBy ? 'true' : 'false'})`;
      const described = (await conn.runAndReadAll(`DESCRIBE SELECT * FROM ${source}`)).getRowObjectsJson() as Array<{
        column_name: string;
        column_type: string;
      }>;
      const types = new Map(described.map((d) => [d.column_name, d.column_type]));
      // the Parquet columns are the table's, with its types (and the partition's month beside them)
      for (const column of table.columns)
        expect(types.get(column.name), `${table.name}.${column.name}`).toBe(column.type);
      const select = table.columns.map((c) => duckdbText(c.name, types.get(c.name)!)).join(', ');
      const rows = (await conn.runAndReadAll(`SELECT ${select} FROM ${source}`)).getRows();
      tables.set(table.name, rows.map((r) => JSON.stringify(r)).sort());
    }
  } finally {
    conn.closeSync();
    instance.closeSync();
  }
  return tables;
}

function duckdbText(column: string, type: string): string {
  const c = quoteIdent(column);
  return type === 'TIMESTAMP WITH TIME ZONE' ? `strftime(${c}, '%Y-%m-%d %H:%M:%S.%f')` : `CAST(${c} AS VARCHAR)`;
}

/** The same canonical text of every row of every table in the warehouse. */
async function readTables(config: DestinationSettings, manifest: ExportManifest): Promise<Map<string, string[]>> {
  return withWarehouse(config, async (conn) => {
    const tables = new Map<string, string[]>();
    for (const table of manifest.tables) {
      const select = table.columns
        .map((c) =>
          config.type === 'postgres'
            ? c.type === 'TIMESTAMP WITH TIME ZONE'
              ? `to_char(${quoteIdent(c.name)} AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS.US')`
              : `CAST(${quoteIdent(c.name)} AS TEXT)`
            : duckdbText(c.name, c.type),
        )
        .map((e, i) => `${e} AS c${i}`)
        .join(', ');
      const rows = await conn.all<Record<string, string | null>>(
        `SELECT ${select} FROM ${conn.schemaSql}.${quoteIdent(table.name)}`,
      );
      tables.set(table.name, rows.map((r) => JSON.stringify(table.columns.map((_, i) => r[`c${i}`] ?? null))).sort());
    }
    return tables;
  });
}

function manifestOf(dir: string): ExportManifest {
  return JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8')) as ExportManifest;
}

function exportLine(stdout: string): { written: number; skipped: number } {
  const m = /(\d+) files written, (\d+) unchanged and skipped/.exec(stdout);
  expect(m, stdout).not.toBeNull();
  return { written: Number(m![1]), skipped: Number(m![2]) };
}

describe.each(testDestinations)('export --format parquet, on $name', (target) => {
  const emulator = useEmulator({
    seed: 40,
    accounts: 30,
    startDate: PROGRAM.start,
    endDate: PROGRAM.end,
    timezone: TZ,
    port: 0,
  });

  it('writes every table as Parquet equal to the warehouse, and later rewrites only the partitions that changed', async () => {
    const { config } = await target.fresh();
    const file = emulatorJobs({
      url: emulator.url,
      timezone: TZ,
      firstDay: PROGRAM.start,
      destination: config,
      streams: ['accounts', 'surveys', 'loyalty_postings'],
      pageSize: 500,
    });
    const first = await runCli(['run', '--config', file, '--until', FIRST_UNTIL]);
    expect(first.code, first.stderr.slice(-800)).toBe(0);

    const dir = join(testTempDir('export-'), 'lake');
    const exported = await runCli(['export', '--config', file, '--format', 'parquet', '--output', dir, ...CLEAR]);
    expect(exported.code, exported.stderr.slice(-800)).toBe(0);
    const manifest = manifestOf(dir);
    expect(manifest.warehouse).toBe(target.name);
    expect(manifest.personalData).toBe('keep');
    expect(exported.stderr).toMatch(/^note: the export holds personal data in clear .*--personal-data keep/m);
    const files = manifest.tables.flatMap((t) => t.files);
    expect(exportLine(exported.stdout)).toEqual({ written: files.length, skipped: 0 });
    // the data tables, their histories and the pipeline's own tables are all there
    const names = manifest.tables.map((t) => t.name);
    for (const name of [
      'loyalty_postings',
      'survey_responses',
      'accounts',
      'accounts_history',
      '_etl_runs',
      '_etl_windows',
    ])
      expect(names, name).toContain(name);
    const postings = manifest.tables.find((t) => t.name === 'loyalty_postings')!;
    expect(postings.partitionedBy).toBe('posted_at');
    expect(postings.files.map((f) => f.month)).toEqual(['2024-04', '2024-05']);
    expect(postings.columns.find((c) => c.name === 'credit')!.type).toBe('DECIMAL(18,4)');
    expect(postings.columns.find((c) => c.name === '_window_start')!.type).toBe('DATE');
    expect(manifest.tables.find((t) => t.name === 'survey_responses')!.partitionedBy).toBe('answered_at');
    expect(manifest.tables.find((t) => t.name === 'accounts_history')!.partitionedBy).toBe('valid_from');
    expect(manifest.tables.find((t) => t.name === '_etl_runs')!.files.map((f) => f.path)).toEqual([
      '_etl_runs/part.parquet',
    ]);
    expect(postings.rows).toBeGreaterThan(0);

    // read back, row for row
    const warehouse = await readTables(config, manifest);
    const lake = await readBack(dir, manifest);
    for (const table of manifest.tables) {
      expect(lake.get(table.name), table.name).toEqual(warehouse.get(table.name));
      expect(lake.get(table.name)!.length, table.name).toBe(table.rows);
    }

    // nothing changed: nothing rewritten
    const mtimes = new Map(files.map((f) => [f.path, statSync(join(dir, f.path)).mtimeMs]));
    const again = await runCli(['export', '--config', file, '--format', 'parquet', '--output', dir, ...CLEAR]);
    expect(again.code, again.stderr.slice(-800)).toBe(0);
    expect(exportLine(again.stdout)).toEqual({ written: 0, skipped: files.length });
    for (const f of files) expect(statSync(join(dir, f.path)).mtimeMs, f.path).toBe(mtimes.get(f.path));

    // a run that adds June: June's partitions are new, April's postings untouched
    const second = await runCli(['run', '--config', file, '--until', PROGRAM.end]);
    expect(second.code, second.stderr.slice(-800)).toBe(0);
    const third = await runCli(['export', '--config', file, '--format', 'parquet', '--output', dir, ...CLEAR]);
    expect(third.code, third.stderr.slice(-800)).toBe(0);
    const after = manifestOf(dir);
    const { written, skipped } = exportLine(third.stdout);
    const afterFiles = after.tables.flatMap((t) => t.files);
    expect(written + skipped).toBe(afterFiles.length);
    expect(skipped).toBeGreaterThan(0);
    const april = 'loyalty_postings/month=2024-04/part.parquet';
    expect(statSync(join(dir, april)).mtimeMs).toBe(mtimes.get(april));
    expect(after.tables.find((t) => t.name === 'loyalty_postings')!.files.map((f) => f.month)).toContain('2024-06');
    // exactly the files whose rows changed were written: the others kept their bytes and time
    const rewritten = afterFiles
      .filter((f) => statSync(join(dir, f.path)).mtimeMs !== mtimes.get(f.path))
      .map((f) => f.path);
    expect(rewritten.length).toBe(written);
    const before = new Map(files.map((f) => [f.path, f]));
    for (const f of afterFiles) {
      const old = before.get(f.path);
      const changed = !old || old.rows !== f.rows || old.fingerprint !== f.fingerprint;
      expect(rewritten.includes(f.path), f.path).toBe(changed);
    }
    const warehouseAfter = await readTables(config, after);
    const lakeAfter = await readBack(dir, after);
    for (const table of after.tables)
      expect(lakeAfter.get(table.name), table.name).toEqual(warehouseAfter.get(table.name));

    // a link inside the folder is never followed: the export stops before writing through it
    const elsewhere = testTempDir('export-elsewhere-');
    rmSync(join(dir, '_etl_runs'), { recursive: true });
    symlinkSync(elsewhere, join(dir, '_etl_runs'));
    const linked = await runCli(['export', '--config', file, '--format', 'parquet', '--output', dir, ...CLEAR]);
    expect(linked.code, linked.stderr).toBe(2);
    expect(linked.stderr.trim().split('\n')).toHaveLength(1);
    expect(readdirSync(elsewhere)).toEqual([]);
  }, 300_000);

  it('writes personal data as destination.analysts.personal_data says (hash by default); in clear only when asked, and says so', async () => {
    const { config } = await target.fresh();
    const file = emulatorJobs({
      url: emulator.url,
      timezone: TZ,
      firstDay: PROGRAM.start,
      destination: config,
      streams: ['accounts', 'surveys'],
      pageSize: 500,
    });
    const run = await runCli(['run', '--config', file, '--until', '2024-04-20']);
    expect(run.code, run.stderr.slice(-800)).toBe(0);
    const clear = await withWarehouse(config, (conn) =>
      conn.all<Record<string, string | null>>(
        `SELECT customer_id, phone, email, first_name, last_name, CAST(birthdate AS VARCHAR) AS birthdate FROM accounts ORDER BY customer_id`,
      ),
    );
    const secrets = new Set(clear.flatMap((r) => PERSONAL.map((c) => r[c]).filter((v): v is string => v !== null)));
    expect(secrets.size).toBeGreaterThan(20);
    const dir = join(testTempDir('export-policy-'), 'lake');

    // the default: hashed, as analysts read it; the manifest says so, and birthdate is text (a hash is no date)
    const hashed = await runCli(['export', '--config', file, '--format', 'parquet', '--output', dir]);
    expect(hashed.code, hashed.stderr.slice(-800)).toBe(0);
    expect(hashed.stderr).not.toMatch(/in clear/);
    expect(hashed.stdout).toMatch(/\(personal data: hash\)/);
    let manifest = manifestOf(dir);
    expect(manifest.personalData).toBe('hash');
    expect(manifest.tables.map((t) => t.name)).not.toContain('_etl_analysts');
    const accounts = manifest.tables.find((t) => t.name === 'accounts')!;
    expect(accounts.columns.find((c) => c.name === 'birthdate')!.type).toBe('VARCHAR');
    let lake = await readBack(dir, manifest);
    const key = createHash('sha256').update(`loyalty-etl personal data\n${SALT}`).digest('hex');
    const hashOf = (v: string) => createHash('sha256').update(`${key}:${v}`).digest('hex');
    const names = accounts.columns.map((c) => c.name);
    const rows = lake.get('accounts')!.map((r) => JSON.parse(r) as Array<string | null>);
    const byId = new Map(rows.map((r) => [r[names.indexOf('customer_id')], r]));
    for (const truth of clear)
      for (const c of PERSONAL)
        expect(byId.get(truth.customer_id)![names.indexOf(c)], `${truth.customer_id}.${c}`).toBe(
          truth[c] === null ? null : hashOf(truth[c]!),
        );
    // no clear value in any file of any table, the pipeline's own included
    const leaks = [...lake].flatMap(([table, texts]) =>
      texts
        .filter((t) => (JSON.parse(t) as unknown[]).some((v) => typeof v === 'string' && secrets.has(v)))
        .map(() => table),
    );
    expect([...new Set(leaks)]).toEqual([]);

    // drop: another policy writes every file again, the personal columns NULL with their types
    const dropped = await runCli([
      'export',
      '--config',
      file,
      '--format',
      'parquet',
      '--output',
      dir,
      '--personal-data',
      'drop',
    ]);
    expect(dropped.code, dropped.stderr.slice(-800)).toBe(0);
    manifest = manifestOf(dir);
    expect(exportLine(dropped.stdout)).toEqual({ written: manifest.tables.flatMap((t) => t.files).length, skipped: 0 });
    expect(manifest.personalData).toBe('drop');
    expect(manifest.tables.find((t) => t.name === 'accounts')!.columns.find((c) => c.name === 'birthdate')!.type).toBe(
      'DATE',
    );
    lake = await readBack(dir, manifest);
    for (const r of lake.get('accounts')!.map((t) => JSON.parse(t) as unknown[]))
      for (const c of PERSONAL) expect(r[names.indexOf(c)], c).toBeNull();

    // in clear only when asked, and said on stderr and in the manifest
    const kept = await runCli(['export', '--config', file, '--format', 'parquet', '--output', dir, ...CLEAR]);
    expect(kept.code, kept.stderr.slice(-800)).toBe(0);
    expect(kept.stderr).toMatch(/^note: the export holds personal data in clear/m);
    expect(manifestOf(dir).personalData).toBe('keep');

    // without LOYALTY_PII_SALT: the key the warehouse keeps, the one its runs hashed with
    const unsalted = await runCli(['export', '--config', file, '--format', 'parquet', '--output', dir], {
      LOYALTY_PII_SALT: '',
    });
    expect(unsalted.code, unsalted.stderr).toBe(0);
    lake = await readBack(dir, manifestOf(dir));
    const again = lake.get('accounts')!.map((r) => JSON.parse(r) as Array<string | null>);
    const phone = names.indexOf('phone');
    expect(new Set(again.map((r) => r[phone]))).toEqual(new Set(rows.map((r) => r[phone])));

    // a warehouse that never hashed (keep) and no salt: nothing gives the key, one line, exit 2
    const { config: plain } = await target.fresh();
    const keepFile = emulatorJobs({
      url: emulator.url,
      timezone: TZ,
      firstDay: PROGRAM.start,
      destination: { ...plain, analysts: { personal_data: 'keep' } } as DestinationSettings,
      streams: ['accounts'],
    });
    expect((await runCli(['run', '--config', keepFile, '--until', '2024-04-03'], { LOYALTY_PII_SALT: '' })).code).toBe(
      0,
    );
    const keyless = await runCli(
      [
        'export',
        '--config',
        keepFile,
        '--format',
        'parquet',
        '--output',
        join(dir, '..', 'other'),
        '--personal-data',
        'hash',
      ],
      { LOYALTY_PII_SALT: '' },
    );
    expect(keyless.code, keyless.stderr).toBe(2);
    expect(keyless.stderr.trim().split('\n')).toEqual([
      expect.stringMatching(/^loyalty-etl: personal data is to be hashed, but the warehouse keeps no key yet/),
    ]);
  }, 300_000);

  it('refuses a bad flag or an output that is a file or a link, with exit 2 and one line', async () => {
    const { config } = await target.fresh();
    const file = emulatorJobs({
      url: emulator.url,
      timezone: TZ,
      firstDay: PROGRAM.start,
      destination: config,
      streams: ['accounts'],
    });
    const where = testTempDir('export-bad-');
    const plain = join(where, 'a-file');
    writeFileSync(plain, 'not a folder');
    const link = join(where, 'a-link');
    symlinkSync(testTempDir('export-elsewhere-'), link);
    for (const args of [
      ['--format', 'csv', '--output', join(where, 'out')],
      ['--format', 'parquet'],
      ['--format', 'parquet', '--output', plain],
      ['--format', 'parquet', '--output', link],
    ]) {
      const result = await runCli(['export', '--config', file, ...args]);
      expect(result.code, `${args.join(' ')}: ${result.stderr}`).toBe(2);
      expect(result.stderr.trim().split('\n'), args.join(' ')).toHaveLength(1);
      expect(result.stderr, args.join(' ')).toMatch(/^loyalty-etl: export: --(format|output)/);
    }
    expect(readFileSync(plain, 'utf8')).toBe('not a folder');
  }, 120_000);
});
