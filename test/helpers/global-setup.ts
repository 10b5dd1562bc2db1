import { randomBytes } from 'node:crypto';
import { appendFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { DuckDbDestination } from '../../src/load/duckdb/duckdb-destination.js';
import { PostgresDestination } from '../../src/load/postgres/postgres-destination.js';
import { buildCliForTests } from './build-cli.js';
import { createTestDatabase, dropTestDatabases, startThrowawayServer } from './postgres-server.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** Superuser URL of the PostgreSQL server the suites create their databases on. */
    pgUrl: string;
    /** Name prefix of this session's test databases, so teardown can drop exactly them. */
    pgDatabasePrefix: string;
    /** A database of the session's as a first open leaves it (schema `public` migrated), that `fresh()` copies. */
    pgTemplate: string;
    /** A DuckDB file as a first open leaves it (schema `main` migrated), that `fresh()` copies. */
    duckdbTemplate: string;
    /** The compiled `loyalty-etl` entry point the suites run as a subprocess. */
    cliEntry: string;
    /** The same CLI bundled behind `cli-host.ts`, which the suites load to run a command in their own process. */
    cliHost: string;
    /** The session's temporary directory: warehouses and jobs files of the suites, deleted at teardown. */
    tempRoot: string;
  }
}

/**
 * Gives the suites a PostgreSQL server with no manual step: `PG_TEST_URL` when set (a role allowed to create
 * databases), otherwise a throwaway cluster from the system binaries, stopped and deleted at teardown; and a
 * temporary directory for their files, deleted at teardown too.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const prefix = `t_${randomBytes(4).toString('hex')}_`;
  const tempRoot = mkdtempSync(join(tmpdir(), 'loyalty-test-'));
  project.provide('tempRoot', tempRoot);
  const external = process.env.PG_TEST_URL || undefined;
  const [server, cli] = await Promise.all([external ? undefined : startThrowawayServer(), buildCliForTests()]);
  project.provide('cliEntry', cli.entry);
  project.provide('cliHost', cli.host);
  const url = external ?? server!.url;
  project.provide('pgUrl', url);
  project.provide('pgDatabasePrefix', prefix);
  project.provide('pgTemplate', await migratedTemplate(url, prefix));
  project.provide('duckdbTemplate', await migratedDuckDbFile(join(tempRoot, 'template.duckdb')));
  return async () => {
    rmSync(tempRoot, { recursive: true, force: true });
    const cpuLog = process.env.LOYALTY_TEST_CPU_LOG;
    if (server && cpuLog) appendFileSync(cpuLog, `postgres\t${server.cpuSeconds()}\n`);
    if (server) await server.stop();
    else await dropTestDatabases(url, prefix);
  };
}

/**
 * Creates the database every `fresh()` PostgreSQL warehouse is copied from, migrated by the pipeline's own first
 * open. Copying it costs the server about half of migrating a new database, and the suite makes hundreds of them.
 */
async function migratedTemplate(serverUrl: string, prefix: string): Promise<string> {
  const url = await createTestDatabase(serverUrl, `${prefix}template_`);
  const destination = await PostgresDestination.open(url);
  try {
    await destination.migrate();
  } finally {
    await destination.close();
  }
  return decodeURIComponent(new URL(url).pathname.slice(1));
}

/** The DuckDB counterpart: a first open migrates a new file in about 0.3 CPU s and, waiting on the disk, seconds. */
async function migratedDuckDbFile(path: string): Promise<string> {
  const destination = await DuckDbDestination.open(path);
  try {
    await destination.migrate();
  } finally {
    await destination.close();
  }
  return path;
}
