import { readEveryTable } from '../warehouse/warehouse-damage.js';
import pg from 'pg';
import type { PoolClient } from 'pg';
import { redactUrl } from '../../log/redact.js';
import type { Destination, SpanLoad, SpanLoadRequest } from '../destination.js';
import { quoteIdent } from '../warehouse/identifiers.js';
import { migrate } from '../warehouse/migrate.js';
import { dropSharedQuestionColumns } from '../derived/survey-catalog.js';
import { commentWarehouse, describeRelations, type DescribedRelation } from '../catalog/table-comments.js';
import { recordAnalystsPolicy, refreshAnalystViews } from '../derived/analyst-views.js';
import type { AnalystsPolicy } from '../../plan/job-plan.js';
import { postgresDialect } from '../warehouse/warehouse-dialect.js';
import { OpenSpans } from '../released-span-load.js';
import type { SqlConnection } from '../warehouse/sql-connection.js';
import {
  isConnectionLoss,
  WarehouseConnectionError,
  WarehouseLockTimeoutError,
} from '../warehouse/warehouse-errors.js';
import { PostgresSqlConnection, textTypes } from './postgres-connection.js';
import { PostgresSpanLoad } from './postgres-span-load.js';

/** Seconds a statement waits for a lock held by another session, unless `destination.busy_timeout_s` says otherwise. */
export const DEFAULT_LOCK_TIMEOUT_S = 300;

/** PostgreSQL's SQLSTATE for a lock not granted within `lock_timeout`. */
const LOCK_NOT_AVAILABLE = '55P03';

/**
 * PostgreSQL (or a PostgreSQL-compatible engine such as Citus): several processes may load at once; each
 * span stages on a session of its own, and commits of one stream take turns through an advisory lock.
 */
export class PostgresDestination implements Destination {
  readonly name = 'postgres';
  readonly capabilities = { multiProcess: true, rowLocks: true, declaredKeys: true, checksumsOnRead: false };
  private readonly spans = new OpenSpans();

  /**
   * Claims, lease renewals and locks go through a pool of their own: spans hold their sessions for as long as
   * they extract, and a worker whose every session is busy must still renew its lease and claim its next span.
   */
  private readonly ledgerPool: pg.Pool;

  private constructor(
    private readonly pool: pg.Pool,
    private readonly url: string,
    readonly schema: string,
    private readonly lockTimeoutSeconds: number,
  ) {
    this.ledgerPool = new pg.Pool({
      connectionString: url,
      types: textTypes,
      application_name: 'loyalty-etl ledger',
      max: 2,
    });
    this.ledgerPool.on('error', () => undefined);
  }

  private get shownUrl(): string {
    return displayUrl(this.url);
  }

  /**
   * Connects to the database at `url` (`postgres://user:password@host:port/db`) and checks that it answers.
   *
   * @example
   * const warehouse = await PostgresDestination.open('postgres://etl@db.internal/analytics', 'loyalty');
   *
   * Every session waits at most `lockTimeoutSeconds` for a lock (PostgreSQL's `lock_timeout`): a reader's session
   * that holds one (an advisory lock, a long transaction) fails the statement with the holder named
   * ({@link WarehouseLockTimeoutError}) instead of holding the night without a word.
   */
  static async open(
    url: string,
    schema = 'public',
    options: { lockTimeoutSeconds?: number } = {},
  ): Promise<PostgresDestination> {
    const pool = new pg.Pool({ connectionString: url, types: textTypes, application_name: 'loyalty-etl', max: 16 });
    // An idle client whose server went away emits 'error' on the pool; without a listener that would end the
    // process. The next checkout gets a fresh connection, and its own error if the server is still gone.
    pool.on('error', () => undefined);
    const destination = new PostgresDestination(
      pool,
      url,
      schema,
      options.lockTimeoutSeconds ?? DEFAULT_LOCK_TIMEOUT_S,
    );
    try {
      const client = await pool.connect();
      client.release();
    } catch (error) {
      await destination.close().catch(() => undefined);
      throw new WarehouseConnectionError(
        `cannot connect to the warehouse ${displayUrl(url)}: ${scrub((error as Error).message, url)}`,
      );
    }
    return destination;
  }

  describeTables(): Promise<DescribedRelation[]> {
    return this.withConnection((conn) => describeRelations(conn, postgresDialect, this.schema));
  }

  describe(): string {
    return `postgres ${this.shownUrl} (schema ${this.schema})`;
  }

  /** Creates the schema and the tables; two processes starting at once take turns (session advisory lock). */
  async migrate(): Promise<void> {
    await this.withConnection(async (conn) => {
      const lockKey = `${this.schema}._etl_migrations`;
      await conn.run('SELECT pg_advisory_lock(hashtext($1))', [lockKey]);
      try {
        await conn.run(`CREATE SCHEMA IF NOT EXISTS ${quoteIdent(this.schema)}`);
        await conn.run(`SET search_path TO ${quoteIdent(this.schema)}`);
        await migrate(conn, 'postgres', this.schema, new Date().toISOString(), this.describe());
        await dropSharedQuestionColumns(conn, postgresDialect, this.schema, {
          runId: 'migration',
          now: new Date().toISOString(),
        });
        await commentWarehouse(conn, postgresDialect, this.schema);
        await refreshAnalystViews(conn, postgresDialect, this.schema, {
          runId: 'migration',
          now: new Date().toISOString(),
        });
      } finally {
        await conn.run('SELECT pg_advisory_unlock(hashtext($1))', [lockKey]);
      }
    });
  }

  /** Records what analysts may read of personal data, and makes their schema of views (`derived/analyst-views.ts`). */
  async keepAnalysts(policy: AnalystsPolicy, runId: string): Promise<void> {
    await this.withConnection((conn) =>
      recordAnalystsPolicy(conn, postgresDialect, this.schema, policy, { runId, now: new Date().toISOString() }),
    );
  }

  async openSpan(request: SpanLoadRequest): Promise<SpanLoad> {
    const client = await this.connect();
    let load: PostgresSpanLoad;
    try {
      load = await PostgresSpanLoad.open(client, this.schema, request);
    } catch (error) {
      client.release(error instanceof Error ? error : true);
      throw this.lost(error);
    }
    const span = this.spans.track(load);
    // a span's commit that waited its longest for a lock says whose, as every other statement does
    return {
      ...span,
      commit: (windows, work) =>
        span.commit(windows, work).catch(async (error: unknown) => {
          throw (error as { code?: string }).code === LOCK_NOT_AVAILABLE
            ? await this.lockTimeoutError(error as Error)
            : this.lost(error);
        }),
    };
  }

  readWhole(): Promise<void> {
    return this.withConnection(
      async (conn) => void (await readEveryTable(conn, 'hashtext(CAST(r AS TEXT))', this.schema)),
    );
  }

  withConnection<T>(fn: (conn: SqlConnection) => Promise<T>): Promise<T> {
    return this.usingClient(this.pool, fn);
  }

  ledgerTransaction<T>(fn: (conn: SqlConnection) => Promise<T>): Promise<T> {
    return this.usingClient(this.ledgerPool, (conn) => conn.transaction(() => fn(conn)));
  }

  private async usingClient<T>(pool: pg.Pool, fn: (conn: SqlConnection) => Promise<T>): Promise<T> {
    const client = await this.connect(pool);
    try {
      const result = await fn(new PostgresSqlConnection(client, this.schema));
      client.release();
      return result;
    } catch (error) {
      // The session may be left in a state the next user should not inherit (an open transaction, a lock).
      client.release(true);
      if ((error as { code?: string }).code === LOCK_NOT_AVAILABLE) throw await this.lockTimeoutError(error as Error);
      throw this.lost(error);
    }
  }

  /** A lost session as a line that says so and names the warehouse; any other error as it is. */
  private lost(error: unknown): unknown {
    if (!isConnectionLoss(error) || error instanceof WarehouseConnectionError) return error;
    return new WarehouseConnectionError(
      `lost the connection to the warehouse ${this.shownUrl}: ${scrub((error as Error).message, this.url)}`,
      { cause: error },
    );
  }

  /**
   * The lock timeout as a line that names who holds what the pipeline waited for: the other sessions holding
   * locks on the schema's tables or advisory locks in the database, those not of the pipeline first.
   */
  private async lockTimeoutError(error: Error): Promise<WarehouseLockTimeoutError> {
    const waited = `waited ${this.lockTimeoutSeconds} s (destination.busy_timeout_s) for a lock on the warehouse ${this.shownUrl}`;
    const client = new pg.Client({
      connectionString: this.url,
      types: textTypes,
      application_name: 'loyalty-etl lock report',
    });
    client.on('error', () => undefined);
    try {
      await client.connect();
      const { rows } = await client.query<{
        pid: number;
        usename: string | null;
        application_name: string;
        client: string | null;
        since: string;
        state: string | null;
        locks: string;
      }>(
        `SELECT a.pid, a.usename, a.application_name, host(a.client_addr) AS client, to_char(a.backend_start AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS') AS since,
                a.state, string_agg(DISTINCT CASE WHEN l.locktype = 'advisory' THEN 'advisory' ELSE l.mode || ' on ' || c.relname END, ', ') AS locks
           FROM pg_locks l
           JOIN pg_stat_activity a ON a.pid = l.pid
           LEFT JOIN pg_class c ON c.oid = l.relation
          WHERE l.granted AND a.pid <> pg_backend_pid() AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
            AND (l.locktype = 'advisory' OR c.relnamespace = (SELECT oid FROM pg_namespace WHERE nspname = $1))
          GROUP BY a.pid, a.usename, a.application_name, a.client_addr, a.backend_start, a.state
          ORDER BY (a.application_name LIKE 'loyalty-etl%' AND a.application_name <> 'loyalty-etl sql'), a.backend_start
          LIMIT 3`,
        [this.schema],
      );
      if (rows.length === 0)
        return new WarehouseLockTimeoutError(`${waited}; its holder has let it go since`, { cause: error });
      const holders = rows.map(
        (r) =>
          `session pid ${r.pid} (user ${r.usename ?? '?'}, application '${r.application_name}'${r.client ? `, from ${r.client}` : ''}, connected ${r.since} UTC, ${r.state ?? 'state unknown'}; holds ${r.locks})`,
      );
      return new WarehouseLockTimeoutError(
        `${waited}, held by ${holders.join('; and by ')}: end it (SELECT pg_terminate_backend(${rows[0]!.pid})) or try again once it has ended`,
        { cause: error },
      );
    } catch {
      return new WarehouseLockTimeoutError(`${waited}; its holder could not be looked up`, { cause: error });
    } finally {
      await client.end().catch(() => undefined);
    }
  }

  async close(): Promise<void> {
    await this.spans.abortAll();
    await Promise.all([this.pool.end(), this.ledgerPool.end()]);
  }

  /** A client of the pool with the session settings every connection shares: the schema first, UTC, ISO dates. */
  private async connect(pool: pg.Pool = this.pool): Promise<PoolClient> {
    let client: PoolClient;
    try {
      client = await pool.connect();
    } catch (error) {
      throw new WarehouseConnectionError(
        `cannot connect to the warehouse ${this.shownUrl}: ${scrub((error as Error).message, this.url)}`,
      );
    }
    keepErrorsOfHeldClient(client);
    try {
      // 0 would mean "wait for ever" to PostgreSQL: a wait of 0 s gives up at once (1 ms)
      const lockTimeoutMs = Math.max(1, Math.round(this.lockTimeoutSeconds * 1000));
      await client.query(
        `SET search_path TO ${quoteIdent(this.schema)}; SET TIME ZONE 'UTC'; SET DateStyle TO 'ISO, YMD'; SET lock_timeout = ${lockTimeoutMs}`,
      );
      return client;
    } catch (error) {
      client.release(true);
      throw this.lost(error);
    }
  }
}

/** Clients that already have the listener below. */
const listening = new WeakSet<PoolClient>();

/**
 * A client checked out of a pool has no 'error' listener of the pool's: when the server ends its session between two
 * queries (a restart, `pg_terminate_backend`), the client emits 'error', which without a listener ends the process
 * with a trace. The loss is not lost with the listener: the holder's next query fails with it, and the span fails.
 */
function keepErrorsOfHeldClient(client: PoolClient): void {
  if (listening.has(client)) return;
  listening.add(client);
  client.on('error', () => undefined);
}

/** The URL without password or query parameters (which may carry one), for logs and `check`. */
export function displayUrl(url: string): string {
  try {
    const u = new URL(url);
    u.password = '';
    u.search = '';
    return redactUrl(u.toString());
  } catch {
    return 'postgres://(unparseable URL)';
  }
}

/** Removes the URL and its password from a driver message, should one ever quote them. */
function scrub(message: string, url: string): string {
  let out = message.split(url).join('[URL]');
  try {
    const password = decodeURIComponent(new URL(url).password);
    if (password.length > 0) out = out.split(password).join('[REDACTED]');
  } catch {
    // an unparseable URL has no password we could name
  }
  return redactUrl(out);
}
