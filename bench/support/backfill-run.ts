import type { DestinationSettings, StreamName } from '../../src/plan/job-plan.js';
import { quoteIdent } from '../../src/load/warehouse/identifiers.js';
import { openDestination } from '../../src/load/warehouses.js';
import { runCli, type CliRun } from './cli-process.js';

/** A `loyalty-etl backfill` as it went, from the process and from the warehouse's own ledger. */
export interface BackfillRun extends CliRun {
  runId: string;
  /** `_etl_runs`: from the run's start to its end (no process start-up, no migrations). */
  runSeconds: number;
  /** Sums of `_etl_windows` over the windows the run loaded. */
  windows: number;
  extracted: number;
  loaded: number;
  rejected: number;
  requests: number;
  /** Rows of each target table afterwards. */
  tableRows: Record<string, number>;
}

/**
 * Runs `loyalty-etl backfill --from --to --stream` with the jobs file as a process of its own, then reads the
 * run's duration and counts from the warehouse. Throws when the command fails.
 */
export async function runBackfill(
  jobsFile: string,
  destination: DestinationSettings,
  stream: StreamName,
  from: string,
  to: string,
  tables: string[],
  nodeOptions: string[] = [],
): Promise<BackfillRun> {
  const run = await runCli(
    ['backfill', '--config', jobsFile, '--job', 'bench', '--from', from, '--to', to, '--stream', stream],
    {},
    nodeOptions,
  );
  if (run.code !== 0) throw new Error(`loyalty-etl backfill exited ${run.code}:\n${run.stderr.slice(-3000)}`);
  const runId = /run ([0-9a-f-]{36})/.exec(run.stdout)?.[1];
  if (!runId) throw new Error(`loyalty-etl backfill did not name its run:\n${run.stdout}`);
  const warehouse = await openDestination(destination);
  try {
    return await warehouse.withConnection(async (conn) => {
      const [timing] = await conn.all<{ s: number | string }>(
        `SELECT EXTRACT(EPOCH FROM finished_at) - EXTRACT(EPOCH FROM started_at) AS s FROM ${conn.schemaSql}._etl_runs WHERE run_id = $1`,
        [runId],
      );
      const [sums] = await conn.all<Record<string, number | string>>(
        `SELECT COUNT(*) AS windows, SUM(rows_extracted) AS extracted, SUM(rows_loaded) AS loaded, SUM(rows_rejected) AS rejected, SUM(requests) AS requests
           FROM ${conn.schemaSql}._etl_windows WHERE run_id = $1`,
        [runId],
      );
      const tableRows: Record<string, number> = {};
      for (const table of tables) {
        const [row] = await conn.all<{ n: number | string }>(
          `SELECT COUNT(*) AS n FROM ${conn.schemaSql}.${quoteIdent(table)}`,
        );
        tableRows[table] = Number(row!.n);
      }
      return {
        ...run,
        runId,
        runSeconds: Number(timing!.s),
        windows: Number(sums!.windows),
        extracted: Number(sums!.extracted),
        loaded: Number(sums!.loaded),
        rejected: Number(sums!.rejected),
        requests: Number(sums!.requests),
        tableRows,
      };
    });
  } finally {
    await warehouse.close();
  }
}
