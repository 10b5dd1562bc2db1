/**
 * `npx tsx bench/loader-statements.ts [--scale 0.1] [--stream accounts] [--rows FILE] [--replays 2] [--keep FILE] [--trace TEXT] [--checkpoint-threshold SIZE]`: where the DuckDB
 * loader's CPU goes, statement by statement. Reads a year of the end-to-end bench's emulated source (its seeds) once,
 * normalized as the pipeline does (kept in `--rows FILE` when named, and read from it when it exists), then replays
 * those rows span by span through the DuckDB destination into a fresh warehouse, `--replays` times, with nothing
 * else running in the process. Prints the process's CPU (DuckDB's threads included) per kind of statement, summed
 * over the spans, and the whole replay's; with `LOADER_SQL_LOG=FILE`, every statement's SQL and CPU are appended to FILE.
 */
import { appendFileSync, existsSync, mkdtempSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { openDestination } from '../src/load/warehouses.js';
import { DuckDbSqlConnection } from '../src/load/duckdb/duckdb-connection.js';
import type { StreamName } from '../src/plan/job-plan.js';
import { streamDefinition } from '../src/streams/registry.js';
import { startBenchEmulator } from './support/bench-emulator.js';
import { writeBenchJobs } from './support/bench-jobs.js';
import { captureRows, LoaderSink, replayLoads, type CapturedRows } from './support/load-replay.js';

const { values } = parseArgs({
  options: {
    scale: { type: 'string', default: '0.1' },
    stream: { type: 'string', default: 'accounts' },
    rows: { type: 'string' },
    replays: { type: 'string', default: '2' },
    keep: { type: 'string' },
    trace: { type: 'string' },
    'checkpoint-threshold': { type: 'string' },
  },
});
const FROM = '2024-01-01';
const TO = '2024-12-31';
const TIMEZONE = 'Europe/Athens';
const stream = values.stream as StreamName;
const dir = mkdtempSync(join(tmpdir(), 'loyalty-loader-statements-'));

/** CPU µs and calls per kind of statement: its verb and the first table it names. */
const cpu = new Map<string, { us: number; calls: number }>();
function kind(sql: string): string {
  const s = sql.replace(/\s+/g, ' ').trim();
  const verb = /^(\w+(?: \w+)?)/.exec(s)?.[1] ?? s.slice(0, 20);
  const table =
    /(?:INTO|FROM|TABLE(?: IF EXISTS| IF NOT EXISTS)?|UPDATE) ((?:"[^"]+"|\w+)(?:\.(?:"[^"]+"|\w+))*)/i.exec(s)?.[1];
  return table ? `${verb} ${table}` : s.slice(0, 60);
}
async function timed<T>(sql: string, run: () => Promise<T>): Promise<T> {
  const start = process.cpuUsage();
  try {
    return await run();
  } finally {
    const used = process.cpuUsage(start);
    const k = kind(sql);
    const entry = cpu.get(k) ?? { us: 0, calls: 0 };
    entry.us += used.user + used.system;
    entry.calls += 1;
    cpu.set(k, entry);
    if (process.env.LOADER_SQL_LOG)
      appendFileSync(process.env.LOADER_SQL_LOG, `-- ${((used.user + used.system) / 1e3).toFixed(0)} ms\n${sql}\n`);
    if (values.trace && k.includes(values.trace))
      process.stdout.write(`    ${((used.user + used.system) / 1e3).toFixed(0).padStart(6)} ms  ${k}\n`);
  }
}
const proto = DuckDbSqlConnection.prototype;
const run = proto.run;
const read = proto.read;
proto.run = function (this: DuckDbSqlConnection, sql: string, params?: readonly unknown[]) {
  return timed(sql, () => run.call(this, sql, params));
};
proto.read = function (this: DuckDbSqlConnection, sql: string, params?: readonly unknown[]) {
  return timed(sql, () => read.call(this, sql, params));
};

let captured: CapturedRows;
const rowsFile = values.rows ?? join(dir, 'rows.jsonl');
if (values.rows && existsSync(values.rows)) {
  captured = { file: values.rows, records: 0, rowsByTable: {}, seconds: 0 };
} else {
  const emulator = await startBenchEmulator({
    seed: 1,
    accounts: Math.round(510_000 * Number(values.scale)),
    startDate: FROM,
    endDate: TO,
    timezone: TIMEZONE,
    port: 0,
  });
  try {
    const { config } = writeBenchJobs(
      {
        url: emulator.url,
        timezone: TIMEZONE,
        firstDay: FROM,
        streams: [stream],
        pageSize: 500,
        concurrency: 4,
        requestsPerSecond: 5000,
        windowDays: 1,
        postingsSpanDays: 366,
      },
      { type: 'duckdb', path: join(dir, 'unused.duckdb'), schema: 'main' },
      dir,
    );
    captured = await captureRows(config, 'bench', stream, FROM, TO, rowsFile);
    process.stderr.write(`captured ${captured.records} records in ${captured.seconds.toFixed(1)} s\n`);
  } finally {
    await emulator.close();
  }
}

try {
  for (let i = 0; i < Number(values.replays); i++) {
    cpu.clear();
    const path = join(dir, `replay-${i}.duckdb`);
    const sink = new LoaderSink(
      'duckdb loader',
      await openDestination({
        type: 'duckdb',
        path,
        schema: 'main',
        ...(values['checkpoint-threshold'] ? { checkpoint_threshold: values['checkpoint-threshold'] } : {}),
      }),
      'bench',
      stream,
      FROM,
    );
    const start = process.cpuUsage();
    const wall = performance.now();
    let rows = 0;
    try {
      rows = (await replayLoads(captured, streamDefinition(stream).tables, [sink]))[0]!.rows;
    } finally {
      await sink.close();
    }
    const used = process.cpuUsage(start);
    const total = (used.user + used.system) / 1e6;
    const lines = [...cpu].sort((a, b) => b[1].us - a[1].us);
    process.stdout.write(
      `replay ${i + 1}: ${rows} rows, ${((performance.now() - wall) / 1000).toFixed(1)} s, CPU ${total.toFixed(2)} s (statements ${(lines.reduce((n, [, e]) => n + e.us, 0) / 1e6).toFixed(2)} s)\n`,
    );
    for (const [k, e] of lines.slice(0, 30))
      process.stdout.write(`  ${(e.us / 1e6).toFixed(3).padStart(7)} s  ${String(e.calls).padStart(5)}×  ${k}\n`);
    if (values.keep) renameSync(path, values.keep);
    rmSync(path, { force: true });
    rmSync(`${path}.wal`, { force: true });
  }
} finally {
  if (!values.rows) rmSync(rowsFile, { force: true });
  rmSync(dir, { recursive: true, force: true });
}
