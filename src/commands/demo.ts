import { basename, isAbsolute, relative } from 'node:path';
import { PII_SALT_VARIABLE, parseConfig, resolveJobPlan, type ResolvedConfig } from '../config/load-config.js';
import { startEmulator } from '../emulator/index.js';
import { incrementalWindows } from '../pipeline/incremental-windows.js';
import { runJob } from '../pipeline/run-job.js';
import { interruptibleRun } from './interruption.js';
import { commandLogger, createApi, createArchive } from './job-session.js';
import { describeSession, failIfUnpublished, usingLoadSession } from './load-session.js';
import { failOnFailedWindows } from './run-summary.js';
import { DEMO_QUERY, financeQuery } from './demo-queries.js';
import { count } from './counts.js';
import { describeDemoRun, describeDemoTables } from './demo-summary.js';
import { writeReport } from '../report/write-report.js';
import type { Command } from 'commander';

/** The demo's own files, named for it: the warehouse and jobs of `jobs.yaml` are never touched. */
const DEMO_FILES = {
  warehouse: './demo.duckdb',
  published: './demo.published.duckdb',
  report: 'demo-report.html',
} as const;

/** The emulated history the demo loads: fixed dates, so every demo run sees the same source. */
const DEMO = {
  seed: 7,
  accounts: 3000,
  startDate: '2025-01-01',
  endDate: '2025-03-31',
  timezone: 'Europe/Athens',
} as const;

/**
 * The emulator's clock: the morning after the demo's history, so the loyalty state (points expiring at month ends,
 * vouchers) is the same on every demo run rather than years of expiries later.
 */
const DEMO_CLOCK = Date.parse('2025-04-01T09:00:00+03:00');
const DEMO_TODAY = '2025-04-01';

/**
 * `npm start`: serves the emulator, runs the `demo` job of the demo's own configuration into ./demo.duckdb (only
 * what is new on a second run), then prints what the warehouse holds and one analyst query with its result. Logs
 * below warnings stay quiet unless `LOYALTY_LOG_LEVEL` asks for them, so the summary reads on its own.
 */
export async function demoCommand(): Promise<void> {
  const out = (line = '') => process.stdout.write(`${line}\n`);
  const emulator = await startEmulator({ ...DEMO, port: 0, clock: () => DEMO_CLOCK });
  try {
    const config = demoConfig(emulator.url);
    out(
      `emulated loyalty service: ${count(DEMO.accounts)} customers, ${DEMO.startDate}..${DEMO.endDate} (${DEMO.timezone}), at ${emulator.url}`,
    );
    out(
      `loading it into ${DEMO_FILES.warehouse} (the demo's own job and warehouse; jobs.yaml and its warehouse are left alone)…`,
    );
    const logger = commandLogger(process.env.LOYALTY_LOG_LEVEL ? {} : { level: 'warn' });
    const api = createApi(config, logger);
    const job = config.jobs.demo!;
    const session = await usingLoadSession(config, logger, async (destination) => {
      const windows = await incrementalWindows(destination, 'demo', job, DEMO.endDate);
      const result = await runJob({
        plan: resolveJobPlan(config, 'demo'),
        command: 'demo',
        work: { kind: 'planned', windows },
        concurrency: 4,
        api,
        destination,
        archive: createArchive(config),
        logger,
        stop: interruptibleRun(),
      });
      out();
      for (const line of describeDemoRun(result, DEMO.endDate)) out(line);
      failOnFailedWindows(result);
      await destination.withConnection(async (conn) => {
        out();
        out(`${DEMO_FILES.warehouse} holds:`);
        for (const line of await describeDemoTables(conn)) out(line);
        out();
        out(`sample query:\n${DEMO_QUERY.sql}`);
        const rows = await conn.all<Record<string, unknown>>(DEMO_QUERY.sql);
        out();
        out(formatRows(rows));
        out();
        const finance = financeQuery(DEMO_TODAY);
        out(`finance query:\n${finance}`);
        out();
        out(formatRows(await conn.all<Record<string, unknown>>(finance)));
      });
      const page = await writeReport(destination, {
        path: DEMO_FILES.report,
        job: 'demo',
        jobConfig: job,
        timezone: DEMO.timezone,
        through: DEMO.endDate,
      });
      out();
      out(`status page: ./${page.path} (open it in a browser; \`loyalty-etl report\` writes one for your own jobs)`);
    });
    process.stdout.write(describeSession(session));
    failIfUnpublished(session.published);
    out(
      `query it yourself: ${selfInvocation()} sql --warehouse ${DEMO_FILES.published}   (add "SELECT …" for one query; any DuckDB client opens the file read-only too)`,
    );
  } finally {
    await emulator.close();
  }
}

/**
 * How to start this command line again from the current folder: `node bin/loyalty-etl.js` when it was started
 * from the project's bin (as `npm start` does), else by its name (`npm link`, an installed package).
 */
function selfInvocation(): string {
  const script = process.argv[1] ?? '';
  if (basename(script) !== 'loyalty-etl.js') return 'loyalty-etl';
  const path = relative(process.cwd(), script);
  return `node ${path.startsWith('..') || isAbsolute(path) ? script : path}`;
}

/**
 * The demo's own configuration, read through the same schema as any jobs file (so every default is the schema's).
 * It never reads jobs.yaml nor the `LOYALTY_*` environment: the demo is the same wherever it runs.
 */
/** The salt of the demo's hashes of personal data: fixed, so its copy is the same wherever it runs (never for real data). */
export const DEMO_PII_SALT = 'loyalty-etl demo salt';

function demoConfig(url: string): ResolvedConfig {
  const file = {
    // the emulated program starts on the demo's first day: nothing before it to sweep
    source: {
      base_url: url,
      timezone: DEMO.timezone,
      history_start: DEMO.startDate,
      page_size: 500,
      requests_per_second: 5000,
      retries: 3,
    },
    destination: { type: 'duckdb', path: DEMO_FILES.warehouse, publish_path: DEMO_FILES.published },
    jobs: {
      // one pass over every customer for the whole history
      demo: {
        streams: DEMO_QUERY.streams,
        window_days: 7,
        lookback_days: 0,
        first_day: DEMO.startDate,
        reject_threshold: 0.1,
        postings: { customers: 'all', max_span_days: 92 },
      },
    },
  };
  // the demo's customers are invented: its copy for analysts is hashed (the default policy) with a salt of its own
  return parseConfig(JSON.stringify(file), 'demo', { [PII_SALT_VARIABLE]: DEMO_PII_SALT });
}

function formatRows(rows: Array<Record<string, unknown>>): string {
  if (rows.length === 0) return '(no rows)';
  const header = Object.keys(rows[0]!);
  const cells = [header, ...rows.map((r) => header.map((h) => String(r[h] ?? 'NULL')))];
  const widths = header.map((_, i) => Math.max(...cells.map((r) => r[i]!.length)));
  return cells.map((r) => r.map((c, i) => c.padEnd(widths[i]!)).join('  ')).join('\n');
}

/** `loyalty-etl demo` and its flags. */
export function registerDemo(program: Command): void {
  program
    .command('demo')
    .description(
      'start the emulator, load it into ./demo.duckdb (its own job and warehouse), show a summary and a sample query',
    )
    .action(demoCommand);
}
