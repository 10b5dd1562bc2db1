import pg from 'pg';
import type { CustomTypesConfig, PoolClient } from 'pg';
import { Kysely, PostgresDialect, type PostgresPool, type PostgresPoolClient } from 'kysely';
import { quoteIdent } from '../identifiers.js';
import type { LedgerTables, SqlConnection } from '../sql-connection.js';

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

/** A {@link SqlConnection} over one `pg` client, checked out of the destination's pool by the caller. */
export class PostgresSqlConnection implements SqlConnection {
  readonly db: Kysely<LedgerTables>;
  readonly schemaSql: string;

  constructor(
    readonly client: PoolClient,
    schema: string,
  ) {
    this.schemaSql = quoteIdent(schema);
    this.db = new Kysely<LedgerTables>({ dialect: new PostgresDialect({ pool: singleClientPool(client) }) }).withSchema(schema);
  }

  async run(sql: string, params: readonly unknown[] = []): Promise<void> {
    await this.client.query(sql, params as unknown[]);
  }

  async all<T>(sql: string, params: readonly unknown[] = []): Promise<T[]> {
    const result = await this.client.query(sql, params as unknown[]);
    return result.rows as T[];
  }

  async transaction<T>(fn: () => Promise<T>): Promise<T> {
    await this.client.query('BEGIN');
    try {
      const result = await fn();
      await this.client.query('COMMIT');
      return result;
    } catch (error) {
      await this.client.query('ROLLBACK').catch(() => undefined);
      throw error;
    }
  }
}

/**
 * Kysely's PostgreSQL dialect wants a pool; this one always hands out the one client it was given and never
 * releases it, so the ledger queries run on the same connection (and inside the same transaction) as the
 * raw statements. The client's owner returns it to the real pool.
 */
function singleClientPool(client: PoolClient): PostgresPool {
  const lent: PostgresPoolClient = {
    query: client.query.bind(client) as PostgresPoolClient['query'],
    release: () => undefined,
  };
  return {
    connect: async () => lent,
    end: async () => undefined,
  };
}
