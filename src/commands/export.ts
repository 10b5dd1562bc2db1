import { existsSync } from 'node:fs';
import type { Command } from 'commander';
import { CommandError, ExitCode } from './exit-codes.js';
import { busyTimeoutOf } from '../config/duckdb-files.js';
import { openWhenFree } from '../load/open-when-free.js';
import {
  ExportPathError,
  destinationExportSource,
  exportDirProblem,
  exportParquet,
  type ExportSource,
} from '../load/export/parquet-export.js';
import { openDuckDbExportSource } from '../load/duckdb/duckdb-export-source.js';
import type { AnalystsPolicy, DestinationSettings } from '../plan/job-plan.js';
import { ConfigError } from '../config/config-error.js';
import { PII_SALT_VARIABLE, personalDataKey, type ResolvedConfig } from '../config/load-config.js';
import { registerSecret } from '../log/redact.js';
import type { Logger } from '../log/logger.js';
import { commandLogger, resolveJob, type CommonOptions } from './job-session.js';
import { withJobFlags } from './shared-flags.js';

export interface ExportOptions extends CommonOptions {
  format: string;
  output?: string;
  /** `keep`, `hash` or `drop`: overrides destination.analysts.personal_data for this export. */
  personalData?: string;
}

const POLICIES = ['keep', 'hash', 'drop'] as const;

/**
 * `loyalty-etl export --format parquet --output DIR`: every table of the warehouse as Parquet under DIR, the large
 * ones partitioned by month, with DIR/manifest.json; a later export rewrites only the partitions that changed.
 */
export async function exportCommand(options: ExportOptions): Promise<void> {
  if (options.format !== 'parquet')
    throw new CommandError(`export: --format must be parquet, not ${options.format}`, ExitCode.usage);
  if (!options.output)
    throw new CommandError(
      'export: --output DIR is required (the folder to write the Parquet files in)',
      ExitCode.usage,
    );
  const problem = exportDirProblem(options.output);
  if (problem) throw new CommandError(`export: --output: ${problem}`, ExitCode.usage);
  if (options.personalData !== undefined && !(POLICIES as readonly string[]).includes(options.personalData))
    throw new CommandError(
      `export: --personal-data must be keep, hash or drop, not ${options.personalData}`,
      ExitCode.usage,
    );
  const { config } = resolveJob(options);
  const policy = exportPolicy(config, options.personalData as AnalystsPolicy['personalData'] | undefined);
  const destination = config.destination;
  // opening a DuckDB path creates a warehouse there: an export of an empty new file would only hide the wrong path
  if (destination.type === 'duckdb' && !existsSync(destination.path))
    throw new CommandError(
      `warehouse ${destination.path} does not exist (run or backfill first, or check destination.path / LOYALTY_WAREHOUSE)`,
      ExitCode.usage,
    );
  const logger = commandLogger();
  let result;
  try {
    result = await withExportSource(config.destination, logger, (source) =>
      exportParquet(source, options.output!, policy),
    );
  } catch (error) {
    if (error instanceof ExportPathError) throw new CommandError(`export: --output: ${error.message}`, ExitCode.usage);
    throw error;
  }
  const { manifest, written, skipped, deleted } = result;
  const files = manifest.tables.reduce((n, t) => n + t.files.length, 0);
  logger.info(
    {
      output: options.output,
      tables: manifest.tables.length,
      files,
      written,
      skipped,
      deleted,
      personalData: manifest.personalData,
    },
    'parquet export written',
  );
  if (policy.personalData === 'keep')
    process.stderr.write(
      `note: the export holds personal data in clear (phone, e-mail, names, birthdate, whole records), as ${options.personalData ? '--personal-data keep' : 'destination.analysts.personal_data: keep'} asks: keep ${options.output} where the warehouse itself may be kept\n`,
    );
  process.stdout.write(
    `exported ${manifest.tables.length} tables to ${options.output} (personal data: ${manifest.personalData}): ${written} files written, ${skipped} unchanged and skipped, ${deleted} deleted\n`,
  );
}

/**
 * What the export writes of personal data: `--personal-data`, else destination.analysts.personal_data (`hash` by
 * default), whose salt it then needs, as a run does.
 */
function exportPolicy(config: ResolvedConfig, asked: AnalystsPolicy['personalData'] | undefined): AnalystsPolicy {
  const personalData = asked ?? config.analysts.personalData;
  if (personalData !== 'hash') return { personalData };
  const salt = process.env[PII_SALT_VARIABLE];
  if (!salt)
    throw new ConfigError(
      PII_SALT_VARIABLE,
      '',
      `is not set: the export hashes personal data (${asked ? '--personal-data hash' : 'destination.analysts.personal_data: hash, the default'}) salted with it; set it, or export with --personal-data drop (or keep, in clear)`,
    );
  const key = personalDataKey(salt);
  registerSecret(key);
  return { personalData, key };
}

/**
 * Runs `fn` on the warehouse as an export reads it: a DuckDB file opened read-only (never migrated, no writer's
 * lock), or the PostgreSQL destination, opened as every command opens it, waiting while it is busy.
 */
async function withExportSource<T>(
  destination: DestinationSettings,
  logger: Logger,
  fn: (source: ExportSource) => Promise<T>,
): Promise<T> {
  if (destination.type === 'duckdb') {
    const source = await openDuckDbExportSource(destination.path, destination.schema ?? 'main');
    try {
      return await fn(source);
    } finally {
      source.close();
    }
  }
  const warehouse = await openWhenFree(destination, { timeoutSeconds: busyTimeoutOf(destination), logger });
  try {
    return await fn(destinationExportSource(warehouse));
  } finally {
    await warehouse.close();
  }
}

/** `loyalty-etl export` and its flags. */
export function registerExport(program: Command): void {
  withJobFlags(
    program
      .command('export')
      .description('write every table as Parquet (large ones partitioned by month) with a manifest; incremental')
      .option('--format <format>', 'parquet', 'parquet')
      .option('--output <dir>', 'the folder to write into (made if absent)')
      .option(
        '--personal-data <policy>',
        'keep (in clear), hash or drop phone, e-mail, names and birthdate (default: destination.analysts.personal_data)',
      ),
  ).action(exportCommand);
}
