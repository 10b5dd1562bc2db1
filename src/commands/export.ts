import type { Command } from 'commander';
import { CommandError, ExitCode } from './exit-codes.js';
import { busyTimeoutOf } from '../config/duckdb-files.js';
import type { WaitOptions } from '../load/open-when-free.js';
import { warehouseOf } from '../load/warehouses.js';
import type { WarehouseEntry } from '../load/warehouse-entry.js';
import { exportDirProblem, exportParquet, type ExportSource } from '../load/export/parquet-export.js';
import { ExportPathError } from '../load/warehouse/warehouse-errors.js';
import { commandLogger, resolveJob, type CommonOptions } from './job-session.js';
import { withJobFlags } from './shared-flags.js';

export interface ExportOptions extends CommonOptions {
  format: string;
  output?: string;
}

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
  const { config } = resolveJob(options);
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
    result = await withExportSource(warehouse, wait, (source) => exportParquet(source, options.output!));
  } catch (error) {
    if (error instanceof ExportPathError) throw new CommandError(`export: --output: ${error.message}`, ExitCode.usage);
    throw error;
  }
  const { manifest, written, skipped, deleted } = result;
  const files = manifest.tables.reduce((n, t) => n + t.files.length, 0);
  logger.info(
    { output: options.output, tables: manifest.tables.length, files, written, skipped, deleted },
    'parquet export written',
  );
  process.stdout.write(
    `exported ${manifest.tables.length} tables to ${options.output}: ${written} files written, ${skipped} unchanged and skipped, ${deleted} deleted\n`,
  );
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
      .option('--output <dir>', 'the folder to write into (made if absent)'),
  ).action(exportCommand);
}
