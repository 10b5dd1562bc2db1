import type { Command } from 'commander';
import { CommandError, ExitCode } from './exit-codes.js';
import { busyTimeoutOf } from '../config/duckdb-files.js';
import type { WaitOptions } from '../load/open-when-free.js';
import { warehouseOf } from '../load/warehouses.js';
import type { WarehouseEntry } from '../load/warehouse-entry.js';
import { exportDirProblem, exportParquet, type ExportSource } from '../load/export/parquet-export.js';
import { ExportPathError } from '../load/warehouse/warehouse-errors.js';
import type { AnalystsPolicy } from '../plan/job-plan.js';
import { PII_SALT_VARIABLE, personalDataKey, type ResolvedConfig } from '../config/load-config.js';
import { registerSecret } from '../log/redact.js';
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
  const warehouse = warehouseOf(config.destination);
  // opening a DuckDB path creates a warehouse there: an export of an empty new file would only hide the wrong path
  const missing = warehouse.missingFile();
  if (missing !== undefined)
    throw new CommandError(
      `warehouse ${missing} does not exist (run or backfill first, or check destination.path / LOYALTY_WAREHOUSE)`,
      ExitCode.usage,
    );
  const logger = commandLogger();
  const wait = { timeoutSeconds: busyTimeoutOf(config.destination), logger };
  let result;
  try {
    result = await withExportSource(warehouse, wait, (source) => exportParquet(source, options.output!, policy));
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
 * default). Under `hash`, the key of `LOYALTY_PII_SALT` when it is set, else the one the warehouse keeps (read in the
 * export's snapshot), as every run hashes with.
 */
function exportPolicy(config: ResolvedConfig, asked: AnalystsPolicy['personalData'] | undefined): AnalystsPolicy {
  const personalData = asked ?? config.analysts.personalData;
  if (personalData !== 'hash') return { personalData };
  const salt = process.env[PII_SALT_VARIABLE];
  if (!salt) return { personalData };
  const key = personalDataKey(salt);
  registerSecret(key);
  return { personalData, key };
}

/** Runs `fn` on the warehouse as an export reads it ({@link WarehouseEntry.openExportSource}). */
async function withExportSource<T>(
  warehouse: WarehouseEntry,
  wait: WaitOptions,
  fn: (source: ExportSource) => Promise<T>,
): Promise<T> {
  const source = await warehouse.openExportSource(wait);
  try {
    return await fn(source);
  } finally {
    await source.close();
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
