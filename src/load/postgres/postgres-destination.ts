import pg from 'pg';
import type { PoolClient } from 'pg';
import { redactUrl } from '../../log/redact.js';
import type { Destination, SpanLoad, SpanLoadRequest } from '../destination.js';
import { quoteIdent } from '../identifiers.js';
import { migrate } from '../migrate.js';
import { dropSharedQuestionColumns } from '../survey-catalog.js';
import { commentWarehouse, describeRelations, type DescribedRelation } from '../table-comments.js';
import { recordAnalystsPolicy, refreshAnalystViews } from '../analyst-views.js';
import type { AnalystsPolicy } from '../../plan/job-plan.js';
import { postgresDialect } from '../warehouse-dialect.js';
import { OpenSpans } from '../released-span-load.js';
import type { SqlConnection } from '../sql-connection.js';
import { PostgresSqlConnection, textTypes } from './postgres-connection.js';
import { PostgresSpanLoad } from './postgres-span-load.js';

/** The warehouse could not be reached or refused the connection; the message never holds credentials. */
export class WarehouseConnectionError extends Error {
  override readonly name = 'WarehouseConnectionError';
}

/**
 * PostgreSQL (or a PostgreSQL-compatible engine such as Citus): several processes may load at once; each
 * span stages on a session of its own, and commits of one stream take turns through an advisory lock.
 */
export class PostgresDestination implements Destination {
  readonly name = 'postgres';
  readonly capabilities = { multiProcess: true, rowLocks: true, declaredKeys: true };
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
  ) {
    this.ledgerPool = new pg.Pool({ connectionString: url, types: textTypes, application_name: 'loyalty-etl ledger', max: 2 });
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
   */
  static async open(url: string, schema = 'public'): Promise<PostgresDestination> {
    const pool = new pg.Pool({ connectionString: url, types: textTypes, application_name: 'loyalty-etl', max: 16 });
    // An idle client whose server went away emits 'error' on the pool; without a listener that would end the
    // process. The next checkout gets a fresh connection, and its own error if the server is still gone.
    pool.on('error', () => undefined);
    const destination = new PostgresDestination(pool, url, schema);
    try {
      const client = await pool.connect();
      client.release();
    } catch (error) {
      await destination.close().catch(() => undefined);
      throw new WarehouseConnectionError(`cannot connect to the warehouse ${displayUrl(url)}: ${scrub((error as Error).message, url)}`);
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
        await migrate(conn, 'postgres', this.schema, new Date().toISOString());
        await dropSharedQuestionColumns(conn, postgresDialect, this.schema, { runId: 'migration', now: new Date().toISOString() });
        await commentWarehouse(conn, postgresDialect, this.schema);
        await refreshAnalystViews(conn, postgresDialect, this.schema, { runId: 'migration', now: new Date().toISOString() });
      } finally {
        await conn.run('SELECT pg_advisory_unlock(hashtext($1))', [lockKey]);
      }
    });
  }

  /** Records what analysts may read of personal data, and makes their schema of views (`load/analyst-views.ts`). */
  async keepAnalysts(policy: AnalystsPolicy, runId: string): Promise<void> {
    await this.withConnection((conn) => recordAnalystsPolicy(conn, postgresDialect, this.schema, policy, { runId, now: new Date().toISOString() }));
  }

  async openSpan(request: SpanLoadRequest): Promise<SpanLoad> {
    const client = await this.connect();
    let load: PostgresSpanLoad;
    try {
      load = await PostgresSpanLoad.open(client, this.schema, request);
    } catch (error) {
      client.release(error instanceof Error ? error : true);
      throw error;
    }
    return this.spans.track(load);
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
      throw error;
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
      throw new WarehouseConnectionError(`cannot connect to the warehouse ${this.shownUrl}: ${scrub((error as Error).message, this.url)}`);
    }
    try {
      await client.query(`SET search_path TO ${quoteIdent(this.schema)}; SET TIME ZONE 'UTC'; SET DateStyle TO 'ISO, YMD'`);
      return client;
    } catch (error) {
      client.release(true);
      throw error;
    }
  }
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
