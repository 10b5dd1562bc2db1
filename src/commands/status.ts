import { eventSpoolOf } from '../config/duckdb-files.js';
import { lastClosedDay } from '../plan/days.js';
import { EventSpool } from '../webhook/event-spool.js';
import { windowStartOf } from '../plan/plan-windows.js';
import type { JobSettings } from '../plan/job-plan.js';
import { readDirectoryStatus } from '../state/directory.js';
import { stateCoverage } from '../state/state-coverage.js';
import { readHistoryStatus } from '../state/history-status.js';
import { streamDefinition } from '../streams/registry.js';
import { readJobStatus, type JobStatus } from '../state/status-report.js';
import { readSchemaChanges } from '../state/schema-changes.js';
import { readUnlistedFields } from '../state/unlisted-fields.js';
import { readLastIntegration } from '../state/integrations.js';
import { STATE_STREAMS } from './verify-state.js';
import { createArchive, resolveJob, usingDestination, type CommonOptions } from './job-session.js';
import { formatStatus } from './status-format.js';
import type { Command } from 'commander';
import { withJobFlags } from './shared-flags.js';

export interface StatusOptions extends CommonOptions {
  json?: boolean;
}

/** The changes of what analysts read that `status` lists, the newest first. */
const SCHEMA_CHANGES_SHOWN = 15;

/** `loyalty-etl status`: per stream the watermark, lag, windows and rejects; the run lock, backfills, the last runs. */
export async function statusCommand(options: StatusOptions): Promise<void> {
  const { config, job, jobConfig } = resolveJob(options);
  const status = await usingDestination(
    config,
    async (destination) => {
      // a damaged block is found only when read: a status is never green over one
      if (destination.capabilities.checksumsOnRead) await destination.readWhole();
      return destination.withConnection(async (conn): Promise<JobStatus> => {
        const status = {
          ...(await readJobStatus(conn, job, jobConfig, lastClosedDay(config.source.timezone))),
          history: await readHistoryStatus(conn, historiesOf(jobConfig)),
          unlistedFields: await readUnlistedFields(conn),
          schemaChanges: await readSchemaChanges(conn, { limit: SCHEMA_CHANGES_SHOWN }),
          integration: await readLastIntegration(conn),
        };
        if (!jobConfig.streams.includes('accounts')) return status;
        const customerState = [];
        for (const stream of STATE_STREAMS.filter((s) => jobConfig.streams.includes(s)))
          customerState.push(await stateCoverage(conn, stream, jobConfig.sweep_days, new Date()));
        return {
          ...status,
          directory: await readDirectoryStatus(conn, job, windowStartOf(jobConfig, config.source.history_start)),
          customerState,
        };
      });
    },
    { create: false },
  );
  const spool = eventSpoolOf(config.destination);
  // events the receiver took that no run has ingested yet: they are in no table, so the warehouse cannot count them
  if (spool !== undefined) status.spooledEvents = (await new EventSpool(spool).pending()).length;
  const archive = createArchive(config);
  if (archive) status.archive = await archive.usage();
  process.stdout.write(options.json ? `${JSON.stringify(status, null, 2)}\n` : formatStatus(status));
}

/** The history tables the job's streams declare, and whether the job keeps them. */
function historiesOf(
  jobConfig: JobSettings,
): Array<{ stream: string; table: string; observations: string; kept: boolean }> {
  const off: Partial<Record<string, boolean>> = jobConfig.history ?? {};
  return jobConfig.streams.flatMap((stream) =>
    streamDefinition(stream).tables.flatMap((t) =>
      t.history
        ? [{ stream, table: t.history.table, observations: t.history.observations, kept: off[stream] !== false }]
        : [],
    ),
  );
}

/** `loyalty-etl status` and its flags. */
export function registerStatus(program: Command): void {
  withJobFlags(
    program
      .command('status')
      .description('per stream: watermark, lag, windows, rejects; the customer directory; the last runs'),
  )
    .option('--json', 'machine-readable output')
    .action(statusCommand);
}
