import {
  createTestDatabase,
  dropTestDatabases,
  startThrowawayServer,
  type PostgresServer,
} from '../../test/helpers/postgres-server.js';

/** A PostgreSQL server the bench may create databases on, and how to give it back. */
export interface BenchPostgres {
  /** A URL of a fresh, empty database on the server. */
  freshDatabase(): Promise<string>;
  /** Where the server came from, for the results file (never a password). */
  origin: string;
  stop(): Promise<void>;
}

const PREFIX = 'bench_';

/**
 * `BENCH_PG_URL` (or `PG_TEST_URL`) when set: a role that may create databases; the bench drops what it
 * created. Otherwise a throwaway cluster from the system binaries, as the tests start one (fsync off, as a
 * bench of the loader rather than of the disk).
 */
export async function startBenchPostgres(): Promise<BenchPostgres> {
  const external = process.env.BENCH_PG_URL || process.env.PG_TEST_URL;
  const server: PostgresServer | undefined = external ? undefined : await startThrowawayServer();
  const url = external ?? server!.url;
  return {
    origin: external ? 'BENCH_PG_URL / PG_TEST_URL' : 'throwaway cluster (system binaries, fsync off)',
    freshDatabase: () => createTestDatabase(url, PREFIX),
    async stop() {
      if (server) await server.stop();
      else await dropTestDatabases(url, PREFIX);
    },
  };
}
