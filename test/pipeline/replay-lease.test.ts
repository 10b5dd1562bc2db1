import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { resolveJob } from '../../src/commands/job-session.js';
import { openDestination } from '../../src/load/warehouses.js';
import { silentLogger } from '../../src/log/logger.js';
import { replayArchive } from '../../src/pipeline/replay-archive.js';
import { AnswerArchive } from '../../src/source/archive/answer-archive.js';
import { beginRun } from '../../src/state/runs.js';
import { JobBusyError } from '../../src/state/state-errors.js';
import { emulatorJobs } from '../helpers/cli.js';
import { postgresTestDestination } from '../helpers/destinations.js';
import { testTempDir } from '../helpers/temp-dir.js';

const LEASE_SECONDS = 1;

// A lease matters where several processes share the warehouse: PostgreSQL (one process holds a DuckDB file).
describe('a replay on PostgreSQL keeps its lease', () => {
  it('a replay that outlives several leases holds the job, and another run cannot take over', async () => {
    const { config: warehouse } = await postgresTestDestination.fresh();
    // no request is sent: a replay asks the archive only
    const file = emulatorJobs({
      url: 'http://127.0.0.1:9',
      timezone: 'UTC',
      firstDay: '2024-05-01',
      destination: warehouse,
      streams: ['accounts'],
    });
    const { plan } = resolveJob({ config: file });
    const destination = await openDestination(warehouse);
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    try {
      // the replay is slowed by its first step, the kept webhook events, until the other run has tried
      const replay = replayArchive({
        plan: { ...plan, leaseSeconds: LEASE_SECONDS },
        archive: new AnswerArchive(testTempDir('archive-')),
        destination,
        logger: silentLogger,
        from: '2024-05-01',
        to: '2024-05-02',
        streams: [],
        command: 'replay --from 2024-05-01 --to 2024-05-02',
        events: async () => {
          await held;
          return [];
        },
      });
      await sleep(LEASE_SECONDS * 3000);
      const other = destination.ledgerTransaction((conn) =>
        beginRun(conn, destination.capabilities, {
          runId: 'other-run',
          job: plan.name,
          command: 'run',
          startedAt: new Date().toISOString(),
          host: 'other-host',
          pid: 1,
          leaseSeconds: 60,
          lock: `run:${plan.name}`,
        }),
      );
      await expect(other).rejects.toBeInstanceOf(JobBusyError);
      release();
      const result = await replay;
      const runs = await destination.withConnection((conn) =>
        conn.all<{ status: string }>(`SELECT status FROM ${conn.schemaSql}._etl_runs WHERE run_id = $1`, [
          result.runId,
        ]),
      );
      expect(runs.map((r) => r.status)).toEqual(['succeeded']);
    } finally {
      release();
      await destination.close();
    }
  });
});
