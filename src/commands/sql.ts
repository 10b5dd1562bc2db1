import { homedir } from 'node:os';
import { join } from 'node:path';
import { text } from 'node:stream/consumers';
import { CommandError, ExitCode } from './exit-codes.js';
import { publishPathOf } from '../config/duckdb-files.js';
import { loadConfig } from '../config/load-config.js';
import { warehouseAt, warehouseOf } from '../load/warehouses.js';
import { type WarehouseReader } from '../load/warehouse/warehouse-reader.js';
import { registerSecret } from '../log/redact.js';
import { type OutputFormat, writeResult } from './result-output.js';
import { runSqlPrompt } from './sql-prompt.js';
import { splitSql } from './sql-statements.js';
import type { Command } from 'commander';
import { QueryError, ReadOnlyRefusal, WarehouseBusyError } from '../load/warehouse/warehouse-errors.js';

export interface SqlOptions {
  config?: string;
  /** A DuckDB file or a postgres:// URL to read instead of the jobs file's warehouse. */
  warehouse?: string;
  csv?: boolean;
  json?: boolean;
  maxRows?: string;
  /** Read the pipeline's own schema (PostgreSQL) or file (DuckDB), where its `_etl_` tables and clear data are. */
  pipeline?: boolean;
}

/**
 * `loyalty-etl sql ["SELECT …"]`: runs SQL on the warehouse, read-only, and prints the results as a table (CSV or
 * JSON with a flag). Without a query it is an interactive prompt on a terminal, and reads a script from stdin
 * otherwise. A DuckDB warehouse is read through the copy published for analysts, so a session never holds the
 * pipeline's file; with no copy published yet, the warehouse file itself, read-only, and the prompt says so.
 */
export async function sqlCommand(query: string | undefined, options: SqlOptions): Promise<void> {
  if (options.csv && options.json) throw new CommandError('sql: --csv and --json: choose one', ExitCode.usage);
  const format: OutputFormat = options.csv ? 'csv' : options.json ? 'json' : 'table';
  const maxRows = options.maxRows === undefined ? 1000 : Number(options.maxRows);
  if (!Number.isInteger(maxRows) || maxRows < 1)
    throw new CommandError(`sql: --max-rows: ${options.maxRows} is not a whole number of at least 1`, ExitCode.usage);
  // `sql --csv … | head`: a reader that stops reading ends the command, as it would end any Unix tool
  process.stdout.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code === 'EPIPE') process.exit(ExitCode.ok);
    throw error;
  });
  const reader = await openReader(options);
  try {
    if (query === undefined && process.stdin.isTTY) {
      await runSqlPrompt(reader, {
        input: process.stdin,
        output: process.stdout,
        terminal: true,
        format,
        maxRows,
        historyFile: historyFile(),
      });
      return;
    }
    const statements = splitSql(query ?? (await text(process.stdin))).statements;
    if (statements.length === 0) throw new CommandError('sql: no statement to run', ExitCode.usage);
    for (const [i, statement] of statements.entries()) {
      if (i > 0 && format === 'table') process.stdout.write('\n');
      try {
        await writeResult(await reader.execute(statement), format, process.stdout, { maxRows });
      } catch (error) {
        if (error instanceof ReadOnlyRefusal || error instanceof QueryError) {
          throw new CommandError(
            `sql: ${error.message}${statements.length > 1 ? ` (statement ${i + 1} of ${statements.length})` : ''}`,
            ExitCode.usage,
          );
        }
        throw error;
      }
    }
  } finally {
    await reader.close();
  }
}

/**
 * The warehouse to read: `--warehouse`, or the jobs file's where analysts read it (DuckDB: its published copy when
 * there is one; PostgreSQL: the analysts' schema), or with `--pipeline` the pipeline's own, which says it holds
 * personal data in clear.
 */
async function openReader(options: SqlOptions): Promise<WarehouseReader> {
  const say = (line: string) => process.stderr.write(`${line}\n`);
  if (options.warehouse !== undefined) {
    if (options.pipeline)
      throw new CommandError(
        "sql: --pipeline reads the jobs file's warehouse: give --config, not --warehouse",
        ExitCode.usage,
      );
    // a PostgreSQL URL's password is kept out of every line, as the jobs file's is
    registerSecret(urlPassword(options.warehouse));
    return readOnly(warehouseAt(options.warehouse).openReader({ say }));
  }
  const config = loadConfig(options.config ?? 'jobs.yaml');
  for (const secret of config.secrets) registerSecret(secret);
  return readOnly(
    warehouseOf(config.destination).openReader({
      say,
      publishedCopy: publishPathOf(config.destination) ?? false,
      pipeline: options.pipeline === true,
      ...(config.analysts.schema ? { analystsSchema: config.analysts.schema } : {}),
    }),
  );
}

/** A session being opened, with what goes wrong said as `sql` says it. */
async function readOnly(opening: Promise<WarehouseReader>): Promise<WarehouseReader> {
  try {
    return await opening;
  } catch (error) {
    if (error instanceof QueryError) throw new CommandError(`sql: ${error.message}`, ExitCode.usage);
    if (error instanceof WarehouseBusyError)
      throw new WarehouseBusyError(
        `sql: ${error.message}; a run holds it until it ends (the published copy is never held)`,
        error.holderPid,
      );
    throw error;
  }
}

/** `LOYALTY_SQL_HISTORY` (empty: none kept), or `~/.loyalty_etl_sql_history`. */
function historyFile(): string | undefined {
  const configured = process.env.LOYALTY_SQL_HISTORY;
  if (configured !== undefined) return configured === '' ? undefined : configured;
  return join(homedir(), '.loyalty_etl_sql_history');
}

/** A flag as the command line writes one: `-c`, `--csv`, `--max-rows=5`. */
const FLAG = /^(-[A-Za-z]|--[A-Za-z][\w-]*(=[\s\S]*)?)$/;

/**
 * The command line with the queries of `sql` that start with `-` (`sql "-- the week's sales\nSELECT …"`) moved
 * behind `--`, where they are read as the query and not as an unknown option. A word that starts with `-` but is
 * no flag (it holds a space, a line break, or starts with `--` and a space) is a query.
 */
export function sqlQueryArgs(argv: readonly string[]): string[] {
  const [node = '', script = '', ...args] = argv;
  let i = 0;
  while (i < args.length && args[i]!.startsWith('-') && args[i] !== '--') i += args[i] === '--log-format' ? 2 : 1;
  if (args[i] !== 'sql') return [...argv];
  const rest = args.slice(i + 1);
  if (rest.includes('--')) return [...argv];
  const queries = rest.filter((a) => a.startsWith('-') && !FLAG.test(a));
  if (queries.length === 0) return [...argv];
  return [node, script, ...args.slice(0, i + 1), ...rest.filter((a) => !queries.includes(a)), '--', ...queries];
}

/** `loyalty-etl sql` and its flags. */
export function registerSql(program: Command): void {
  program
    .command('sql')
    .description(
      'run SQL on the warehouse, read-only (DuckDB: its published copy); an interactive prompt without a query',
    )
    .argument('[query]', 'statements to run (default: a prompt on a terminal, else read from stdin)')
    .option('-c, --config <file>', 'the jobs file', 'jobs.yaml')
    .option(
      '--warehouse <file-or-url>',
      "read this DuckDB file or postgres:// URL instead of the jobs file's warehouse",
    )
    .option('--csv', 'print CSV')
    .option('--json', 'print a JSON array of objects')
    .option('--max-rows <n>', 'rows a table shows at most (CSV and JSON print every row)', '1000')
    .option(
      '--pipeline',
      "read the pipeline's own tables (_etl_…) and personal data in clear: its PostgreSQL schema, or its DuckDB file (runs wait while the session is open)",
    )
    .action(sqlCommand);
}

/** The password of a PostgreSQL URL, in its user part or its `password` parameter, or "" when it has none. */
function urlPassword(url: string): string {
  try {
    const parsed = new URL(url);
    return decodeURIComponent(parsed.password) || (parsed.searchParams.get('password') ?? '');
  } catch {
    return '';
  }
}
