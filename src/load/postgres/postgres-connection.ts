import pg from 'pg';
import type { CustomTypesConfig, PoolClient } from 'pg';
import { Kysely, PostgresDialect, type PostgresPool, type PostgresPoolClient } from 'kysely';
import { quoteIdent } from '../warehouse/identifiers.js';
import { Mutex } from '../warehouse/mutex.js';
import type { LedgerTables, SqlConnection } from '../warehouse/sql-connection.js';

/** Type OIDs whose values stay as PostgreSQL's text (dates, timestamps, JSON), as DuckDB hands them out. */
const KEEP_AS_TEXT = new Set([
  1082, // date
  1114, // timestamp
  1184, // timestamptz
  114, // json
  3802, // jsonb
]);

/**
 * Value parsing for every client of the destination: dates, timestamps and JSON arrive as text
 * (`2024-01-01`, `2024-01-01 10:00:00+00` with the session in UTC), never as JS `Date` objects that would
 * shift a day with the local zone. `numeric` and `bigint` already arrive as text; `integer` as a number.
 */
export const textTypes: CustomTypesConfig = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') => {
    if (KEEP_AS_TEXT.has(oid) && format !== 'binary') return (value: string) => value;
    return format === 'binary' ? pg.types.getTypeParser(oid, 'binary') : pg.types.getTypeParser(oid, 'text');
  }) as CustomTypesConfig['getTypeParser'],
};

/**
 * A {@link SqlConnection} over one `pg` client, checked out of the destination's pool by the caller. Its queries
 * (raw and Kysely's) take turns: a client runs one query at a time, and pg 8 only warns about a second one sent
 * while the first is under way (pg 9 refuses it).
 */
export class PostgresSqlConnection implements SqlConnection {
  readonly db: Kysely<LedgerTables>;
  readonly schemaSql: string;
  private readonly turns = new Mutex();

  constructor(
    readonly client: PoolClient,
    schema: string,
  ) {
    this.schemaSql = quoteIdent(schema);
    this.db = new Kysely<LedgerTables>({
      dialect: new PostgresDialect({ pool: singleClientPool((sql, params) => this.query(sql, params)) }),
    }).withSchema(schema);
  }

  async run(sql: string, params: readonly unknown[] = []): Promise<void> {
    await this.query(sql, params);
  }

  async all<T>(sql: string, params: readonly unknown[] = []): Promise<T[]> {
    const result = await this.query(sql, params);
    return result.rows as T[];
  }

  async transaction<T>(fn: () => Promise<T>): Promise<T> {
    await this.query('BEGIN');
    try {
      const result = await fn();
      await this.query('COMMIT');
      return result;
    } catch (error) {
      await this.query('ROLLBACK').catch(() => undefined);
      throw error;
    }
  }

  /** One query on the client, after those asked for before it have finished. */
  private query(sql: string, params: readonly unknown[] = []): Promise<pg.QueryResult> {
    return this.turns.run(() => this.client.query(sql, params as unknown[]));
  }
}

/**
 * Kysely's PostgreSQL dialect wants a pool; this one always hands out the one connection it was given and never
 * releases it, so the ledger queries run on the same connection (and inside the same transaction, taking turns
 * with them) as the raw statements. The client's owner returns it to the real pool.
 */
function singleClientPool(query: (sql: string, params?: readonly unknown[]) => Promise<pg.QueryResult>): PostgresPool {
  const lent: PostgresPoolClient = {
    query: query as unknown as PostgresPoolClient['query'],
    release: () => undefined,
  };
  return {
    connect: async () => lent,
    end: async () => undefined,
  };
}
