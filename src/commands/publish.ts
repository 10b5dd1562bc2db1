import { CommandError, ExitCode } from './exit-codes.js';
import { busyTimeoutOf, publishPathOf } from '../config/duckdb-files.js';
import { warehouseOf } from '../load/warehouses.js';
import { commandLogger, resolveJob, type CommonOptions } from './job-session.js';
import { analystsKeyOf, describeSession, failIfUnpublished, publishForReaders } from './load-session.js';
import type { Command } from 'commander';
import { withJobFlags } from './shared-flags.js';
import { interruptedExitCode } from './interruption.js';

/**
 * `loyalty-etl publish`: publishes the read-only copy of a DuckDB warehouse for analysts now, as every run and
 * backfill does when it ends (after a failed publish, or to make the first copy without a run).
 */
export async function publishCommand(options: CommonOptions): Promise<void> {
  const { config } = resolveJob(options);
  const destination = config.destination;
  const warehouse = warehouseOf(destination);
  if (!warehouse.publishesCopy)
    throw new CommandError(
      'publish: a PostgreSQL warehouse serves its readers itself; there is no copy to publish',
      ExitCode.usage,
    );
  if (publishPathOf(destination) === undefined)
    throw new CommandError(
      `publish: ${config.file}: destination.publish_path is false: publishing is off`,
      ExitCode.usage,
    );
  const logger = commandLogger();
  const stopOnSignal = (signal: NodeJS.Signals) => {
    // the copy is written beside the published one and renamed over it at its end: cut short, readers keep theirs,
    // and the next publish removes what this one left
    process.stderr.write(
      `loyalty-etl: interrupted by ${signal}: the copy was not published; readers keep the previous one\n`,
    );
    process.exit(interruptedExitCode(signal));
  };
  process.once('SIGINT', stopOnSignal).once('SIGTERM', stopOnSignal);
  let published;
  try {
    const opened = await warehouse.openWhenFree({ timeoutSeconds: busyTimeoutOf(destination), logger });
    try {
      const settled = { ...config, analysts: await analystsKeyOf(opened, config, logger) };
      published = await publishForReaders(opened, settled, logger);
    } finally {
      await opened.close();
    }
  } finally {
    process.off('SIGINT', stopOnSignal).off('SIGTERM', stopOnSignal);
  }
  process.stdout.write(describeSession({ published }));
  failIfUnpublished(published);
}

/** `loyalty-etl publish` and its flags. */
export function registerPublish(program: Command): void {
  withJobFlags(
    program
      .command('publish')
      .description(
        "publish the DuckDB warehouse's read-only copy for analysts now (runs and backfills do when they end)",
      ),
  ).action(publishCommand);
}
