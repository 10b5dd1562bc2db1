#!/usr/bin/env node
import { Command, CommanderError, Option } from 'commander';
import { ConfigError } from '../config/config-error.js';
import { redact } from '../log/redact.js';
import { WarehouseBusyError } from '../load/duckdb/duckdb-destination.js';
import { SourceError } from '../source/source-errors.js';
import { backfillCommand } from '../commands/backfill.js';
import { checkCommand } from '../commands/check.js';
import { demoCommand } from '../commands/demo.js';
import { emulatorCommand } from '../commands/emulator.js';
import { publishCommand } from '../commands/publish.js';
import { runCommand } from '../commands/run.js';
import { sqlCommand } from '../commands/sql.js';
import { statusCommand } from '../commands/status.js';
import { collectList, webhookCommand } from '../commands/webhook.js';
import { verifyCommand } from '../commands/verify.js';
import { JobBusyError } from '../state/runs.js';
import { CommandError, ExitCode } from './exit-codes.js';

/** The `loyalty-etl` command line. */
export function buildProgram(): Command {
  const program = new Command('loyalty-etl')
    .description('Loads survey answers, customer accounts and loyalty postings from the loyalty service into DuckDB or PostgreSQL.')
    .showHelpAfterError()
    .exitOverride();
  const common = (cmd: Command) =>
    cmd.option('-c, --config <file>', 'the jobs file', 'jobs.yaml').option('-j, --job <name>', 'the job to work on (default: the first in the file)');

  common(program.command('run').description('incremental load: every stream of the job from its watermark (less the look-back) to the last closed day'))
    .option('--until <day>', 'last day to load instead of the last closed day')
    .action(runCommand);
  common(program.command('backfill').description('re-extract a historical range in windows'))
    .requiredOption('--from <day>', 'first day (YYYY-MM-DD)')
    .requiredOption('--to <day>', 'last day (YYYY-MM-DD)')
    .option('--stream <name>', 'only this stream')
    .option('--concurrency <n>', 'spans at once (default: source.concurrency)')
    .option('--restart', 'start the range afresh instead of resuming or joining the open backfill of the same range')
    .action(backfillCommand);
  common(program.command('verify').description("compare the warehouse with the source's counts per window; exit 4 on gaps"))
    .requiredOption('--from <day>', 'first day (YYYY-MM-DD)')
    .requiredOption('--to <day>', 'last day (YYYY-MM-DD)')
    .option('--stream <name>', 'only this stream')
    .option('--json', 'machine-readable output')
    .action(verifyCommand);
  common(program.command('status').description('per stream: watermark, lag, windows, rejects; the last runs'))
    .option('--json', 'machine-readable output')
    .action(statusCommand);
  common(program.command('check').description('validate the config, reach the source and the warehouse')).action(checkCommand);
  common(program.command('publish').description("publish the DuckDB warehouse's read-only copy for analysts now (runs and backfills do when they end)")).action(publishCommand);
  program
    .command('sql')
    .description('run SQL on the warehouse, read-only (DuckDB: its published copy); an interactive prompt without a query')
    .argument('[query]', 'statements to run (default: a prompt on a terminal, else read from stdin)')
    .option('-c, --config <file>', 'the jobs file', 'jobs.yaml')
    .option('--warehouse <file-or-url>', 'read this DuckDB file or postgres:// URL instead of the jobs file\'s warehouse')
    .option('--csv', 'print CSV')
    .option('--json', 'print a JSON array of objects')
    .option('--max-rows <n>', 'rows a table shows at most (CSV and JSON print every row)', '1000')
    .action(sqlCommand);
  program
    .command('emulator')
    .description('serve the emulated source (auth: --auth-header with the secret in LOYALTY_API_TOKEN)')
    .option('--port <n>', 'port (0 picks a free one)', '8787')
    .option('--host <host>', 'address to listen on', '127.0.0.1')
    .option('--seed <n>', 'seed of the generated data', '1')
    .option('--accounts <n>', 'number of customers', '300')
    .option('--start <day>', 'first day with data (default: 89 days before --end)')
    .option('--end <day>', 'last day with data (default: yesterday)')
    .option('--timezone <zone>', 'business time zone', 'Europe/Athens')
    .option('--auth-header <name>', 'require this header to carry LOYALTY_API_TOKEN')
    .option('--bad-rate <share>', 'share of malformed records in the exports', '0')
    .addOption(new Option('--postings-order <order>', 'order of postings listings').choices(['newest-first', 'oldest-first']))
    .option('--webhook <url>', 'call this loyalty webhook subscriber on every change of points (repeatable)', (url: string, urls: string[] = []) => [...urls, url])
    .option('--latency <ms>', 'fault: delay before every answer')
    .option('--jitter <ms>', 'fault: extra random delay, from 0 to this')
    .option('--server-errors <share>', 'fault: share of requests answered 500, 502 or 503')
    .option('--too-many-requests <share>', 'fault: share of requests answered 429 with Retry-After')
    .option('--retry-after <s>', 'fault: Retry-After of those 429s, in seconds (default 1)')
    .option('--hangs <share>', 'fault: share of requests never answered')
    .option('--cut-bodies <share>', 'fault: share of answers cut off mid-JSON')
    .option('--error-bodies <share>', 'fault: share of requests answered HTTP 200 with a 1xxx error body')
    .option('--error-body-code <code>', 'fault: code of those error bodies: 1002, 1004, 1006 or 1010 (default 1006)')
    .option('--drift <share>', 'fault: share of listings that change while they are paged')
    .option('--drift-reads <n>', 'fault: page reads that see a drifting listing changed (default 1)')
    .option('--down-after <n>', 'fault: answer 503 to every request after the first N')
    .option('--fault-seed <n>', 'seed of the faults (default: --seed)')
    .action(emulatorCommand);
  program
    .command('webhook')
    .description('receive the loyalty webhook into the loyalty_events table (for postings.customers: webhook)')
    .option('-c, --config <file>', 'the jobs file', 'jobs.yaml')
    .option('--port <n>', 'port (0 picks a free one)', '8788')
    .option('--host <host>', 'address to listen on', '127.0.0.1')
    .option('--secret-header <name>', 'also take the secret (LOYALTY_WEBHOOK_SECRET) in this header, on POST /hooks')
    .option('--authenticated-upstream', 'run without a secret: a proxy or gateway in front authenticates every call')
    .option('--allow-from <cidr>', 'only these source addresses or CIDR ranges may call (repeatable)', collectList)
    .option('--trusted-proxy <cidr>', "believe this proxy's X-Forwarded-For about the caller (repeatable)", collectList)
    .option('--max-calls-per-second <n>', 'cap on calls per source address; beyond it, 429 with Retry-After')
    .action(webhookCommand);
  program.command('demo').description('start the emulator, load it into ./warehouse.duckdb, show a summary and a sample query').action(demoCommand);
  return program;
}

/** Runs the command line and exits with the command's code; failures end with one clear line on stderr. */
export async function main(argv: string[]): Promise<number> {
  try {
    await buildProgram().parseAsync(argv);
    return ExitCode.ok;
  } catch (error) {
    if (error instanceof CommanderError) return error.exitCode === 0 ? ExitCode.ok : ExitCode.usage;
    const [code, message] = classify(error);
    process.stderr.write(`loyalty-etl: ${redact(message)}\n`);
    if (code === ExitCode.internal && error instanceof Error && error.stack) process.stderr.write(`${redact(error.stack)}\n`);
    return code;
  }
}

function classify(error: unknown): [number, string] {
  if (error instanceof CommandError) return [error.exitCode, error.message];
  if (error instanceof ConfigError) return [ExitCode.usage, error.message];
  if (error instanceof WarehouseBusyError) return [ExitCode.busy, error.message];
  if (error instanceof JobBusyError) return [ExitCode.busy, error.message];
  if (error instanceof SourceError) return [ExitCode.windowsFailed, `source: ${error.message}`];
  return [ExitCode.internal, error instanceof Error ? error.message : String(error)];
}
