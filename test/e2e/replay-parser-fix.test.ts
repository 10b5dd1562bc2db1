import { spawn } from 'node:child_process';
import { cpSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, inject } from 'vitest';
import { startEmulator, type Emulator } from '../../src/emulator/index.js';
import type { DestinationSettings } from '../../src/plan/job-plan.js';
import { emulatorJobs, runCli, type CliResult } from '../helpers/cli.js';
import { testDestinations } from '../helpers/destinations.js';
import { dumpTables } from '../helpers/table-dump.js';
import { testTempDir } from '../helpers/temp-dir.js';
import { withWarehouse } from '../helpers/warehouse-reader.js';

const TZ = 'Europe/Athens';
const START = '2024-05-01';
const END = '2024-05-06';
const STREAMS = ['accounts', 'surveys', 'loyalty_status'];
const SLOW = 300_000;
/**
 * Tables whose rows sum up many records (a survey's count of responses and its first and last, its question
 * columns, distinct values read as a type, unlisted members counted): a record loaded changes their rows without naming its customer. They are checked by the
 * equality with a warehouse the fixed parser loaded whole.
 */
const SUMMARIES = new Set([
  'surveys',
  '_etl_typed_values',
  '_etl_typed_columns',
  '_etl_type_evidence',
  '_etl_unlisted_fields',
  'survey_question_columns',
]);

/**
 * The release before a parser fix: the compiled CLI of this session with one line of the zone-abbreviation
 * table taken out, as a table that lacked an abbreviation would read. It sits beside the tests' own build, so
 * that it finds `sql/` and `node_modules` the same way. Nothing of the product is switched: the load and the
 * replay are two builds, as a user's are two releases.
 */
function olderRelease(): { entry: string; remove: () => void } {
  const build = resolve(dirname(inject('cliEntry')), '..');
  const older = `${build}-before-west-${process.pid}`;
  rmSync(older, { recursive: true, force: true });
  cpSync(build, older, { recursive: true });
  // the tests' build bundles the CLI into cli/main.js, the zone-abbreviation table with it
  const table = join(older, 'cli/main.js');
  const text = readFileSync(table, 'utf8');
  const before = text.replace(/\n\s*\[["']WEST["'], 60\],/, '');
  if (before === text) throw new Error(`${table}: no WEST line to take out (the table's text changed)`);
  writeFileSync(table, before);
  return { entry: join(older, 'cli/bin.js'), remove: () => rmSync(older, { recursive: true, force: true }) };
}

function runRelease(entry: string, args: string[]): Promise<CliResult> {
  const child = spawn(process.execPath, [entry, ...args], {
    env: { ...process.env, LOYALTY_LOG_LEVEL: 'info' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => (stdout += d));
  child.stderr.on('data', (d) => (stderr += d));
  return new Promise((done) => child.on('close', (code, signal) => done({ code, signal, stdout, stderr })));
}

describe.each(testDestinations)('a parser fix replayed from the archive on $name', (target) => {
  let emulator: Emulator | undefined;
  let release: ReturnType<typeof olderRelease>;
  beforeAll(async () => {
    release = olderRelease();
    // a service that labels its timestamps with zone abbreviations, Lisbon's summer WEST among them
    emulator = await startEmulator({
      seed: 23,
      accounts: 30,
      startDate: START,
      endDate: END,
      timezone: TZ,
      port: 0,
      clock: () => Date.parse('2024-05-07T08:00:00Z'),
      readings: { zoneLabels: 'abbreviations' },
    });
  });
  afterAll(async () => {
    await emulator?.close();
    release?.remove();
  });

  const jobsFile = (destination: DestinationSettings, url: string) =>
    emulatorJobs({
      url,
      timezone: TZ,
      firstDay: START,
      destination,
      streams: STREAMS,
      lookbackDays: 1,
      // the older release rejects every record with a WEST timestamp: more than the default 5% of a window
      postings: '    reject_threshold: 1\n',
    });
  const dump = (config: DestinationSettings) => withWarehouse(config, (conn) => dumpTables(conn, config.schema));

  it(
    'the fixed release replays the range with the service stopped: exactly the records the old one rejected leave _etl_rejects for their tables, every other row unchanged',
    async () => {
      const archive = join(testTempDir('archive-'), 'answers');
      const { config: fresh } = await target.fresh();
      const loaded = { ...fresh, archive: { path: archive } };
      const night = await runRelease(release.entry, [
        'run',
        '--config',
        jobsFile(loaded, emulator!.url),
        '--until',
        END,
      ]);
      expect(night.code, night.stdout + night.stderr).toBe(0);
      const before = await dump(loaded);
      await emulator!.close();
      emulator = undefined;

      // what the old release could not read: records whose key holds a WEST timestamp, fields that do, nothing else
      const rejects = await withWarehouse(loaded, (conn) =>
        conn.all<{ stream: string; payload: string; error: string }>(
          `SELECT stream, payload, error FROM _etl_rejects ORDER BY stream, payload`,
        ),
      );
      const fieldRejects = await withWarehouse(loaded, (conn) =>
        conn.all<{ stream: string; record_key: string; raw_value: string; error: string }>(
          `SELECT stream, record_key, raw_value, error FROM _etl_field_rejects ORDER BY stream, record_key`,
        ),
      );
      expect(rejects.length + fieldRejects.length, 'the older release cannot read some values').toBeGreaterThan(0);
      for (const r of rejects) expect([r.stream, r.error]).toEqual([r.stream, expect.stringMatching(/"WEST"/)]);
      for (const f of fieldRejects) expect([f.stream, f.raw_value]).toEqual([f.stream, expect.stringMatching(/WEST/)]);
      // the customers they name (an account's customerId, a survey answer's; a field's record key starts with it)
      const customers = new Set([
        ...rejects.flatMap((r) => [...r.payload.matchAll(/"customerId":"([^"]+)"/g)].map((m) => m[1]!)),
        ...fieldRejects.map((f) => f.record_key.split(' ')[0]!),
      ]);
      expect(customers.size).toBeGreaterThan(0);
      for (const stream of new Set([...rejects, ...fieldRejects].map((r) => r.stream)))
        expect(STREAMS).toContain(stream);

      // the fixed release: replay --rejects loads again only the windows holding rejects, from the archive
      const fixed = await target.copy(loaded);
      const fixedFile = jobsFile(fixed.config, 'http://127.0.0.1:9');
      const replayed = await runCli(['replay', '--config', fixedFile, '--from', START, '--to', END, '--rejects']);
      expect(replayed.code, replayed.stdout + replayed.stderr).toBe(0);
      expect(replayed.stdout).toMatch(/\(\d+ rows, 0 rejected\), no request to the service/);
      const after = await dump(fixed.config);
      expect(after.get('_etl_rejects'), 'every record the fix reads has left _etl_rejects').toEqual([]);
      expect(after.get('_etl_field_rejects'), 'every field the fix reads has left _etl_field_rejects').toEqual([]);

      // exactly the rejected records' rows changed: a row added or gone names one of their customers, or is
      // keyed by a row that does (a survey's answers by its response)
      const changed = new Map<string, string[][]>();
      const added = new Map<string, string[]>();
      for (const [table, rows] of after) {
        if (table === '_etl_rejects' || table === '_etl_field_rejects' || SUMMARIES.has(table)) continue;
        const was = new Set(before.get(table) ?? []);
        const now = new Set(rows);
        const fresh = rows.filter((r) => !was.has(r));
        added.set(table, fresh);
        changed.set(
          table,
          [...fresh, ...[...was].filter((r) => !now.has(r))].map((r) => JSON.parse(r) as string[]),
        );
      }
      const affected = new Set(customers);
      for (const rows of changed.values())
        for (const row of rows) if (row.some((v) => customers.has(String(v)))) affected.add(String(row[0]));
      for (const [table, rows] of changed) {
        const strangers = rows.filter((row) => !row.some((v) => affected.has(String(v))));
        expect(strangers, `${table}: rows changed that no rejected record names`).toEqual([]);
      }
      // and each rejected record has left a row of its customer: its account or version, its survey response
      const named = new Set([...added.values()].flat().flatMap((r) => JSON.parse(r) as string[]));
      for (const customer of customers) expect(named, customer).toContain(customer);
      expect(added.get('accounts_history')?.length).toBeGreaterThan(0);

      // what the fixed release makes of the whole archive, into a new warehouse: the same warehouse
      const { config: whole } = await target.fresh();
      const wholeConfig = { ...whole, archive: { path: archive } };
      const all = await runCli([
        'replay',
        '--config',
        jobsFile(wholeConfig, 'http://127.0.0.1:9'),
        '--from',
        START,
        '--to',
        END,
      ]);
      expect(all.code, all.stdout + all.stderr).toBe(0);
      const reference = await dump(wholeConfig);
      for (const [table, rows] of reference) expect(after.get(table), table).toEqual(rows);

      // the whole range replayed on the old release's warehouse (not only the rejects' windows): the same again
      const range = await target.copy(loaded);
      const rangeRun = await runCli([
        'replay',
        '--config',
        jobsFile(range.config, 'http://127.0.0.1:9'),
        '--from',
        START,
        '--to',
        END,
      ]);
      expect(rangeRun.code, rangeRun.stdout + rangeRun.stderr).toBe(0);
      const ranged = await dump(range.config);
      for (const [table, rows] of reference) expect(ranged.get(table), table).toEqual(rows);
    },
    SLOW,
  );
});
