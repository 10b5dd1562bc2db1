import { execFile, execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';

const run = promisify(execFile);

/** Where Debian and Ubuntu install the server binaries: `/usr/lib/postgresql/<major>/bin`. */
const SERVER_ROOT = '/usr/lib/postgresql';

/** A PostgreSQL server the tests may create databases on; `stop` removes whatever the tests left behind. */
export interface PostgresServer {
  /** A superuser URL of the server's `postgres` database. */
  url: string;
  /** CPU seconds (user + system) the server and its finished backends have spent so far, from `/proc`. */
  cpuSeconds(): number;
  /**
   * Stops the server and starts it again on the same port: `fast` as an administrator would (every session told
   * "terminating connection due to administrator command"), `immediate` as a crash would (sessions cut, recovery
   * on start). `downMs` keeps it stopped that long in between.
   */
  restart(mode: 'fast' | 'immediate', downMs?: number): Promise<void>;
  stop(): Promise<void>;
}

/** The newest `/usr/lib/postgresql/<major>/bin` holding `initdb` and `pg_ctl`, or undefined. */
export function findServerBinaries(): string | undefined {
  if (!existsSync(SERVER_ROOT)) return undefined;
  return readdirSync(SERVER_ROOT)
    .filter((major) => /^\d+(\.\d+)?$/.test(major))
    .sort((a, b) => Number(b) - Number(a))
    .map((major) => join(SERVER_ROOT, major, 'bin'))
    .find((bin) => existsSync(join(bin, 'initdb')) && existsSync(join(bin, 'pg_ctl')));
}

/**
 * Starts a throwaway cluster from the system binaries: a fresh data directory in a temp dir, trust
 * authentication, loopback only, a free port, fsync off. The server refuses to run as root, so under root
 * every server command runs as the `postgres` user (`runuser`), which owns the temp dir.
 */
export async function startThrowawayServer(): Promise<PostgresServer> {
  const bin = findServerBinaries();
  if (!bin) {
    throw new Error(
      `no PostgreSQL server binaries found under ${SERVER_ROOT}/*/bin. Install them (Debian/Ubuntu: apt-get install -y postgresql-15) ` +
        'or set PG_TEST_URL to a server where the tests may create databases.',
    );
  }
  const dir = mkdtempSync(join(tmpdir(), 'loyalty-etl-pg-'));
  const data = join(dir, 'data');
  const log = join(dir, 'server.log');
  const asServerUser = serverUserRunner(dir);
  try {
    await asServerUser(join(bin, 'initdb'), [
      '-D',
      data,
      '-A',
      'trust',
      '-U',
      'postgres',
      '-E',
      'UTF8',
      '--no-locale',
      '-N',
    ]);
    let lastError: unknown;
    for (let attempt = 0; attempt < 3; attempt++) {
      const port = await freePort();
      const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off`;
      try {
        await asServerUser(join(bin, 'pg_ctl'), ['-D', data, '-l', log, '-w', '-t', '60', 'start', '-o', options]);
      } catch (error) {
        lastError = error; // most likely the port was taken in between; try another
        continue;
      }
      return {
        url: `postgres://postgres@127.0.0.1:${port}/postgres`,
        cpuSeconds() {
          const pid = readFileSync(join(data, 'postmaster.pid'), 'utf8').split('\n')[0];
          const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
          const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
          return fields.slice(11, 15).reduce((sum, ticks) => sum + Number(ticks) / 100, 0);
        },
        async restart(mode, downMs = 0) {
          await asServerUser(join(bin, 'pg_ctl'), ['-D', data, '-m', mode, '-w', 'stop']);
          if (downMs > 0) await new Promise((r) => setTimeout(r, downMs));
          await asServerUser(join(bin, 'pg_ctl'), ['-D', data, '-l', log, '-w', '-t', '60', 'start', '-o', options]);
        },
        async stop() {
          await asServerUser(join(bin, 'pg_ctl'), ['-D', data, '-m', 'immediate', '-w', 'stop']).catch(() => undefined);
          rmSync(dir, { recursive: true, force: true });
        },
      };
    }
    throw lastError;
  } catch (error) {
    const serverLog = existsSync(log) ? readFileSync(log, 'utf8').slice(-2000) : '';
    rmSync(dir, { recursive: true, force: true });
    throw new Error(
      `could not start a throwaway PostgreSQL server from ${bin}: ${(error as Error).message}${serverLog ? `\nserver log:\n${serverLog}` : ''}`,
    );
  }
}

/** Runs a server command as the current user, or as `postgres` (owner of `dir`) when the current user is root. */
function serverUserRunner(dir: string): (file: string, args: string[]) => Promise<void> {
  if (process.getuid?.() !== 0) return async (file, args) => void (await run(file, args, { timeout: 120_000 }));
  const uid = Number(readId('-u'));
  const gid = Number(readId('-g'));
  chownSync(dir, uid, gid);
  return async (file, args) =>
    void (await run('runuser', ['-u', 'postgres', '--', file, ...args], { timeout: 120_000, cwd: dir }));
}

function readId(flag: '-u' | '-g'): string {
  try {
    return execFileSync('id', [flag, 'postgres'], { encoding: 'utf8' }).trim();
  } catch {
    throw new Error(
      'running as root, but there is no "postgres" user to run the server as (the postgresql-15 package creates it)',
    );
  }
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** `postgres://…/<database>`: the same server and credentials, another database. */
export function databaseUrl(serverUrl: string, database: string): string {
  const url = new URL(serverUrl);
  url.pathname = `/${encodeURIComponent(database)}`;
  return url.toString();
}

/**
 * Creates a database named `<prefix><random>` and returns its URL: empty, or a copy of the database `template` (on
 * the same server, with no session open on it).
 */
export async function createTestDatabase(serverUrl: string, prefix: string, template?: string): Promise<string> {
  const name = `${prefix}${randomBytes(6).toString('hex')}`;
  const client = new pg.Client({ connectionString: serverUrl });
  await client.connect();
  try {
    await client.query(
      `CREATE DATABASE "${name}"${template === undefined ? '' : ` TEMPLATE "${template.replaceAll('"', '""')}"`}`,
    );
  } finally {
    await client.end();
  }
  return databaseUrl(serverUrl, name);
}

/** Drops every database whose name starts with `prefix` (what one test session created on a shared server). */
export async function dropTestDatabases(serverUrl: string, prefix: string): Promise<void> {
  const client = new pg.Client({ connectionString: serverUrl });
  await client.connect();
  try {
    const { rows } = await client.query<{ datname: string }>(
      `SELECT datname FROM pg_database WHERE starts_with(datname, $1)`,
      [prefix],
    );
    for (const { datname } of rows)
      await client.query(`DROP DATABASE IF EXISTS "${datname.replaceAll('"', '""')}" WITH (FORCE)`);
  } finally {
    await client.end();
  }
}
