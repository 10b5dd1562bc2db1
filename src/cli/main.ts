#!/usr/bin/env node
import { Command, CommanderError } from 'commander';
import { redact } from '../log/redact.js';
import { RELEASE } from '../load/warehouse/package-root.js';
import { warehouseFaultOf } from '../load/warehouse/warehouse-fault.js';
import { registerBackfill } from '../commands/backfill.js';
import { registerCheck } from '../commands/check.js';
import { registerDemo } from '../commands/demo.js';
import { registerEmulator } from '../commands/emulator.js';
import { registerExport } from '../commands/export.js';
import { registerProbe } from '../commands/probe.js';
import { registerPublish } from '../commands/publish.js';
import { registerCatalog } from '../commands/catalog.js';
import { registerReplay } from '../commands/replay.js';
import { registerReport } from '../commands/report.js';
import { registerRun } from '../commands/run.js';
import { registerSql, sqlQueryArgs } from '../commands/sql.js';
import { registerStatus } from '../commands/status.js';
import { interruptedExitCode } from '../commands/interruption.js';
import { registerWebhook } from '../commands/webhook.js';
import { logProcessWarnings, logUnexpected, useLogFormat } from '../commands/job-session.js';
import { registerVerify } from '../commands/verify.js';
import { CommandError, EXIT_CODE_OF_KIND, ExitCode } from '../commands/exit-codes.js';
import { KindedError } from '../plan/error-kind.js';
import { RunInterruptedError } from '../pipeline/pipeline-errors.js';

/** The `loyalty-etl` command line: each command registers itself and its flags, in its own file. */
export function buildProgram(): Command {
  const program = new Command('loyalty-etl')
    .description(
      'Loads survey answers, customer accounts and loyalty postings from the loyalty service into DuckDB or PostgreSQL.',
    )
    .version(RELEASE, '-V, --version', 'print the release and exit')
    .option(
      '--log-format <format>',
      'json (one JSON object a line) or pretty (human lines); default: pretty when stderr is a terminal, else json',
    )
    .showHelpAfterError()
    .exitOverride()
    .hook('preAction', (command) => chooseLogFormat(command.opts<{ logFormat?: string }>().logFormat));
  for (const register of [
    registerRun,
    registerBackfill,
    registerVerify,
    registerReplay,
    registerStatus,
    registerReport,
    registerCheck,
    registerProbe,
    registerPublish,
    registerCatalog,
    registerExport,
    registerSql,
    registerEmulator,
    registerWebhook,
    registerDemo,
  ])
    register(program);
  return program;
}

/** Runs the command line and exits with the command's code; failures end with one clear line on stderr. */
export async function main(argv: string[]): Promise<number> {
  try {
    checkLogLevel(process.env.LOYALTY_LOG_LEVEL);
    await buildProgram().parseAsync(sqlQueryArgs(argv));
    return ExitCode.ok;
  } catch (error) {
    if (error instanceof CommanderError) return error.exitCode === 0 ? ExitCode.ok : ExitCode.usage;
    const [code, message] = classify(error);
    // a bug's stack goes before the closing line, which stays the last; off a terminal it is a JSON line too
    if (code === ExitCode.internal && error instanceof Error && error.stack) logUnexpected(error);
    process.stderr.write(`loyalty-etl: ${redact(message)}\n`);
    return code;
  }
}

/**
 * Human log lines for a person at a terminal, JSON lines for everything else (a scheduler, a pipe, a file), unless
 * `--log-format` says which; colour only on a terminal, and never with `NO_COLOR` (https://no-color.org).
 */
function chooseLogFormat(flag: string | undefined): void {
  if (flag !== undefined && flag !== 'json' && flag !== 'pretty')
    throw new CommandError(`--log-format: '${flag}' is no log format (use json or pretty)`, ExitCode.usage);
  const terminal = process.stderr.isTTY === true;
  const format = flag ?? (terminal ? 'pretty' : 'json');
  useLogFormat(format, format === 'pretty' && terminal && !process.env.NO_COLOR);
  if (format === 'json') logProcessWarnings();
}

/** Levels `LOYALTY_LOG_LEVEL` may name (pino's). */
const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

function checkLogLevel(level: string | undefined): void {
  if (level !== undefined && level !== '' && !LOG_LEVELS.includes(level)) {
    throw new CommandError(
      `LOYALTY_LOG_LEVEL: '${level}' is no log level (use one of ${LOG_LEVELS.join(', ')})`,
      ExitCode.usage,
    );
  }
}

/**
 * The exit code and the one line of an error: its kind's code (commands/exit-codes.ts), but for what needs the
 * error itself (a command's own code, an interrupted run's signal) or is no error of ours (a server that cannot
 * listen).
 */
function classify(error: unknown): [number, string] {
  if (error instanceof CommandError) return [error.exitCode, error.message];
  if (error instanceof RunInterruptedError) {
    return [
      interruptedExitCode(error.signal),
      `${error.message}: the windows under way were called off and the run is recorded as interrupted; the next run takes them`,
    ];
  }
  const listen = listenProblem(error);
  if (listen) return [ExitCode.usage, listen];
  if (error instanceof KindedError)
    return [EXIT_CODE_OF_KIND[error.kind], error.kind === 'source' ? `source: ${error.message}` : error.message];
  // a damaged block or a full disk, met by a read or a write anywhere, said as what it is
  const fault = warehouseFaultOf(error);
  if (fault) return [EXIT_CODE_OF_KIND[fault.kind], fault.message];
  return [ExitCode.internal, error instanceof Error ? error.message : String(error)];
}

/** A server (`emulator`, `webhook`) that cannot listen where it was told: the address is taken or not allowed. */
function listenProblem(error: unknown): string | undefined {
  const e = error as NodeJS.ErrnoException & { address?: string; port?: number };
  if (e?.syscall !== 'listen') return undefined;
  const where = `${e.address ?? ''}:${e.port ?? ''}`;
  if (e.code === 'EADDRINUSE')
    return `cannot listen on ${where}: the port is in use by another process (choose another with --port)`;
  if (e.code === 'EACCES')
    return `cannot listen on ${where}: not allowed (ports below 1024 need privileges; choose another with --port)`;
  if (e.code === 'EADDRNOTAVAIL') return `cannot listen on ${where}: no such address on this machine (check --host)`;
  return `cannot listen on ${where}: ${e.code ?? e.message}`;
}
