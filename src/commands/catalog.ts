import { writeFileSync } from 'node:fs';
import type { Command } from 'commander';
import { CommandError, ExitCode } from './exit-codes.js';
import { busyTimeoutOf } from '../config/duckdb-files.js';
import { openWhenFree } from '../load/open-when-free.js';
import { warehouseOf } from '../load/warehouses.js';
import { dataDictionary, dbtSources, jsonCatalog, type CatalogTarget } from './catalog-formats.js';
import { commandLogger, resolveJob, type CommonOptions } from './job-session.js';
import { withJobFlags } from './shared-flags.js';

const FORMATS = { dbt: dbtSources, markdown: dataDictionary, json: jsonCatalog } as const;

/**
 * `loyalty-etl catalog --format dbt|markdown|json`: what every table, view and column holds, from the comments the
 * warehouse carries: dbt sources (YAML), a data dictionary page (Markdown), or JSON; on stdout, or into `--output`.
 */
export async function catalogCommand(options: CommonOptions & { format?: string; output?: string }): Promise<void> {
  const format = options.format ?? 'markdown';
  if (!Object.hasOwn(FORMATS, format))
    throw new CommandError(`catalog: --format must be dbt, markdown or json, not ${format}`, ExitCode.usage);
  const { config } = resolveJob(options);
  const destination = config.destination;
  const logger = commandLogger();
  const entry = warehouseOf(destination);
  // a catalog only reads: a warehouse that is not there is an error, never a new empty one to describe
  const warehouse = await openWhenFree(() => entry.open({ create: false }), {
    timeoutSeconds: busyTimeoutOf(destination),
    logger,
  });
  let relations;
  try {
    relations = await warehouse.describeTables();
  } finally {
    await warehouse.close();
  }
  const target: CatalogTarget = {
    warehouse: entry.name,
    ...entry.analystsRead(config.analysts),
    personalData: config.analysts.personalData,
    pipelineTables: config.analysts.pipelineTables ?? false,
  };
  const text = FORMATS[format as keyof typeof FORMATS](relations, target);
  if (options.output) writeFileSync(options.output, text);
  else process.stdout.write(text);
}

/** `loyalty-etl catalog` and its flags. */
export function registerCatalog(program: Command): void {
  withJobFlags(
    program
      .command('catalog')
      .description('describe every table and column: dbt sources (YAML), a data dictionary (Markdown) or JSON')
      .option('--format <format>', 'dbt, markdown or json', 'markdown')
      .option('--output <file>', 'write to this file instead of stdout'),
  ).action(catalogCommand);
}
