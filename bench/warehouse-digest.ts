/**
 * `npx tsx bench/warehouse-digest.ts --out before.json [--scale 0.01] [--streams …] [--cpu-prof DIR] [--memory-limit 64MB]
 * [--staging-memory 24MB]`: loads a year of the
 * end-to-end bench's emulated source (the same seeds) into a fresh DuckDB warehouse with `loyalty-etl backfill`
 * (accounts, surveys, then postings), and writes a digest of every table: its row count and, per column, an
 * order-free sum of the values' hashes. Columns that say when or by which run a row was written are left out.
 *
 * `npx tsx bench/warehouse-digest.ts --compare before.json after.json`: the tables and columns whose digests
 * differ (exit 1), or that none do. A change meant to make the pipeline faster must leave every digest as it was.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import type { DestinationSettings, StreamName } from '../src/plan/job-plan.js';
import { quoteIdent } from '../src/load/warehouse/identifiers.js';
import { openDestination } from '../src/load/warehouses.js';
import { startBenchEmulator } from './support/bench-emulator.js';
import { writeBenchJobs } from './support/bench-jobs.js';
import { runBackfill } from './support/backfill-run.js';

/**
 * Columns that hold when or by which run a row was written, or when the service was asked (a customer's postings,
 * its loyalty state): they differ between two loads of the same data. The state streams' histories start their
 * versions at those instants too, so their `valid_from`/`valid_to` differ as well: compare those streams by rows.
 */
const VOLATILE =
  /^(_?loaded_at|_?run_id|updated_at|started_at|finished_at|added_at|applied_at|claimed_by|claimed_at|backfill_id|rejected_at|observed_at|last_observed_at|first_seen_at|last_seen_at)$/;
/** The run ledger itself: its rows are runs, not data. */
const LEDGER_ONLY = new Set(['_etl_runs', '_etl_run_events', '_etl_locks', '_etl_workers']);

type Digest = Record<string, { rows: number; columns: Record<string, string> }>;

const { values, positionals } = parseArgs({
  options: {
    out: { type: 'string' },
    scale: { type: 'string', default: '0.01' },
    streams: { type: 'string', default: 'accounts,surveys,loyalty_postings' },
    'cpu-prof': { type: 'string' },
    compare: { type: 'boolean', default: false },
    'memory-limit': { type: 'string' },
    'staging-memory': { type: 'string' },
  },
  allowPositionals: true,
});

if (values.compare) {
  const [a, b] = positionals.map((file) => JSON.parse(readFileSync(file, 'utf8')) as Digest);
  if (!a || !b) throw new Error('--compare needs two digest files');
  const differences: string[] = [];
  for (const table of new Set([...Object.keys(a), ...Object.keys(b)])) {
    const [x, y] = [a[table], b[table]];
    if (!x || !y) differences.push(`${table}: only in ${x ? 'the first' : 'the second'}`);
    else if (x.rows !== y.rows) differences.push(`${table}: ${x.rows} rows against ${y.rows}`);
    else
      for (const column of new Set([...Object.keys(x.columns), ...Object.keys(y.columns)]))
        if (x.columns[column] !== y.columns[column]) differences.push(`${table}.${column}: values differ`);
  }
  process.stdout.write(
    differences.length === 0 ? `same: ${Object.keys(a).length} tables, every column\n` : `${differences.join('\n')}\n`,
  );
  process.exit(differences.length === 0 ? 0 : 1);
}

if (!values.out) throw new Error('--out FILE (or --compare A B)');
const scale = Number(values.scale);
const FROM = '2024-01-01';
const TO = '2024-12-31';
const TIMEZONE = 'Europe/Athens';
const dir = mkdtempSync(join(tmpdir(), 'loyalty-digest-'));
const emulator = await startBenchEmulator({
  seed: 1,
  accounts: Math.round(510_000 * scale),
  startDate: FROM,
  endDate: TO,
  timezone: TIMEZONE,
  port: 0,
});
try {
  const destination: DestinationSettings = {
    type: 'duckdb',
    path: join(dir, 'warehouse.duckdb'),
    schema: 'main',
    ...(values['memory-limit'] ? { memory_limit: values['memory-limit'] } : {}),
    ...(values['staging-memory'] ? { staging_memory: values['staging-memory'] } : {}),
  };
  const streams = values.streams.split(',') as StreamName[];
  const { file } = writeBenchJobs(
    {
      url: emulator.url,
      timezone: TIMEZONE,
      firstDay: FROM,
      streams,
      pageSize: 500,
      concurrency: 4,
      requestsPerSecond: 5000,
      windowDays: 1,
      postingsSpanDays: 31,
    },
    destination,
    dir,
  );
  for (const stream of streams) {
    const prof = values['cpu-prof']
      ? ['--cpu-prof', '--cpu-prof-dir', values['cpu-prof'], '--cpu-prof-name', `${stream}.cpuprofile`]
      : [];
    const run = await runBackfill(file, destination, stream, FROM, TO, [], prof);
    process.stderr.write(
      `${stream}: ${run.extracted} records in ${run.runSeconds.toFixed(1)} s, CPU ${run.cpuSeconds.toFixed(1)} s, peak RSS ${Math.round(run.peakRssBytes / 2 ** 20)} MB\n`,
    );
  }
  const warehouse = await openDestination(destination);
  const digest: Digest = {};
  try {
    await warehouse.withConnection(async (conn) => {
      const tables = await conn.all<{ table_name: string }>(
        `SELECT table_name FROM information_schema.tables WHERE table_schema = 'main' AND table_type = 'BASE TABLE' ORDER BY table_name`,
      );
      for (const { table_name: table } of tables) {
        if (LEDGER_ONLY.has(table)) continue;
        const columns = (
          await conn.all<{ column_name: string }>(
            `SELECT column_name FROM information_schema.columns WHERE table_schema = 'main' AND table_name = $1 ORDER BY ordinal_position`,
            [table],
          )
        )
          .map((c) => c.column_name)
          .filter((c) => !VOLATILE.test(c));
        const sums = columns.map((c, i) => `CAST(SUM(CAST(hash(${quoteIdent(c)}) AS HUGEINT)) AS VARCHAR) AS c${i}`);
        const [row] = await conn.all<Record<string, string | number | bigint>>(
          `SELECT COUNT(*) AS n${sums.map((s) => `, ${s}`).join('')} FROM main.${quoteIdent(table)}`,
        );
        digest[table] = {
          rows: Number(row!.n),
          columns: Object.fromEntries(columns.map((c, i) => [c, String(row![`c${i}`])])),
        };
      }
    });
  } finally {
    await warehouse.close();
  }
  writeFileSync(values.out, `${JSON.stringify(digest, null, 2)}\n`);
  process.stderr.write(`${Object.keys(digest).length} tables digested into ${values.out}\n`);
} finally {
  await emulator.close();
  rmSync(dir, { recursive: true, force: true });
}
