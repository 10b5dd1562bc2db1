import { existsSync } from 'node:fs';
import type { StreamName } from '../config/config-schema.js';
import { loadConfig, type ResolvedConfig } from '../config/load-config.js';
import { startEmulator } from '../emulator/index.js';
import { runJob } from '../pipeline/run-job.js';
import { planIncrementalWindows } from '../plan/plan-windows.js';
import type { Window } from '../plan/windows.js';
import { readWatermark } from '../state/ledger.js';
import { commandLogger, createApi } from './job-session.js';
import { describeSession, failIfUnpublished, usingLoadSession } from './load-session.js';
import { summarizeRun, failOnFailedWindows } from './report.js';
import { DEMO_QUERY, demoTableCounts } from './demo-queries.js';

/** Where the demo publishes the warehouse for readers: `publish_path`'s default beside `./warehouse.duckdb`. */
const DEMO_PUBLISHED = './warehouse.published.duckdb';

/** The emulated history the demo loads: fixed dates, so every demo run sees the same source. */
const DEMO = { seed: 7, accounts: 3000, startDate: '2025-01-01', endDate: '2025-03-31', timezone: 'Europe/Athens' } as const;

/**
 * `npm start`: serves the emulator, runs the `demo` job into ./warehouse.duckdb (only what is new on a second
 * run), then prints what the warehouse holds and one analyst query with its result.
 */
export async function demoCommand(): Promise<void> {
  const out = (line = '') => process.stdout.write(`${line}\n`);
  const emulator = await startEmulator({ ...DEMO, port: 0 });
  try {
    const config = demoConfig(emulator.url);
    out(`emulator serving ${DEMO.accounts} customers, ${DEMO.startDate}..${DEMO.endDate}, at ${emulator.url}`);
    out(`loading into ./warehouse.duckdb (job "demo"; JSON logs on stderr)…`);
    const logger = commandLogger();
    const api = createApi(config, logger);
    const job = config.jobs.demo!;
    const session = await usingLoadSession(config, logger, async (destination) => {
      const windows = new Map<StreamName, Window[]>();
      await destination.withConnection(async (conn) => {
        for (const stream of job.streams) windows.set(stream, planIncrementalWindows(job, await readWatermark(conn, 'demo', stream), DEMO.endDate));
      });
      const result = await runJob({ config, job: 'demo', command: 'demo', work: { kind: 'planned', windows }, concurrency: 4, api, destination, logger });
      out();
      out(summarizeRun(result));
      failOnFailedWindows(result);
      await destination.withConnection(async (conn) => {
        out();
        out('warehouse tables:');
        for (const { table, rows } of await demoTableCounts(conn)) out(`  ${table.padEnd(24)} ${rows} rows`);
        out();
        out(`sample query:\n${DEMO_QUERY.sql}`);
        const rows = await conn.all<Record<string, unknown>>(DEMO_QUERY.sql);
        out();
        out(formatRows(rows));
      });
    });
    out();
    process.stdout.write(describeSession(session));
    failIfUnpublished(session.published);
    out(`query it yourself: npx loyalty-etl sql --warehouse ${DEMO_PUBLISHED}   (add "SELECT …" for one query; any DuckDB client opens the file read-only too)`);
  } finally {
    await emulator.close();
  }
}

function demoConfig(url: string): ResolvedConfig {
  const base = existsSync('jobs.yaml') ? loadConfig('jobs.yaml', { ...process.env, LOYALTY_WAREHOUSE: undefined }) : undefined;
  return {
    file: 'demo',
    source: {
      base_url: url,
      auth: { header: 'Authorization', prefix: '', token: '' },
      timezone: DEMO.timezone,
      // the emulated program starts on its first day: nothing before it to sweep
      history_start: DEMO.startDate,
      page_size: base?.source.page_size ?? 500,
      concurrency: 4,
      requests_per_second: 5000,
      retries: 3,
      timeout_ms: 30_000,
      backoff_base_ms: 250,
      backoff_max_ms: 30_000,
    },
    destination: { type: 'duckdb', path: './warehouse.duckdb', schema: 'main', publish_path: DEMO_PUBLISHED },
    jobs: {
      demo: {
        streams: DEMO_QUERY.streams,
        window_days: 7,
        lookback_days: 0,
        first_day: DEMO.startDate,
        reject_threshold: 0.1,
        // one pass over every customer for the whole history
        postings: { customers: 'all', max_span_days: 92 },
      },
    },
    secrets: [],
  };
}

function formatRows(rows: Array<Record<string, unknown>>): string {
  if (rows.length === 0) return '(no rows)';
  const header = Object.keys(rows[0]!);
  const cells = [header, ...rows.map((r) => header.map((h) => String(r[h] ?? 'NULL')))];
  const widths = header.map((_, i) => Math.max(...cells.map((r) => r[i]!.length)));
  return cells.map((r) => r.map((c, i) => c.padEnd(widths[i]!)).join('  ')).join('\n');
}
