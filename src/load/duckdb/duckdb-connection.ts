import type { DuckDBConnection, DuckDBValue } from '@duckdb/node-api';
import {
  CompiledQuery,
  Kysely,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
  type DatabaseConnection,
  type Dialect,
  type Driver,
  type QueryResult,
} from 'kysely';
import { quoteIdent } from '../identifiers.js';
import type { LedgerTables, SqlConnection } from '../sql-connection.js';

/** A {@link SqlConnection} over one DuckDB connection. */
export class DuckDbSqlConnection implements SqlConnection {
  readonly db: Kysely<LedgerTables>;
  readonly schemaSql: string;

  constructor(
    readonly raw: DuckDBConnection,
    schema: string,
  ) {
    this.schemaSql = quoteIdent(schema);
    this.db = new Kysely<LedgerTables>({ dialect: singleConnectionDialect(this) }).withSchema(schema);
  }

  async run(sql: string, params: readonly unknown[] = []): Promise<void> {
    await this.raw.run(sql, params.length ? (params as DuckDBValue[]) : undefined);
  }

  async all<T>(sql: string, params: readonly unknown[] = []): Promise<T[]> {
    const reader = await this.raw.runAndReadAll(sql, params.length ? (params as DuckDBValue[]) : undefined);
    return reader.getRowObjectsJson() as T[];
  }

  async transaction<T>(fn: () => Promise<T>): Promise<T> {
    await this.raw.run('BEGIN TRANSACTION');
    try {
      const result = await fn();
      await this.raw.run('COMMIT');
      return result;
    } catch (error) {
      await this.raw.run('ROLLBACK').catch(() => undefined);
      throw error;
    }
  }
}

/**
 * Kysely's PostgreSQL compiler speaks a dialect DuckDB accepts ($n parameters, double-quoted names), so a
 * DuckDB dialect only needs a driver; this one always hands out the one connection it was given, and
 * leaves transactions to {@link DuckDbSqlConnection.transaction}.
 */
function singleConnectionDialect(connection: DuckDbSqlConnection): Dialect {
  const databaseConnection: DatabaseConnection = {
    async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
      const reader = await connection.raw.runAndReadAll(query.sql, query.parameters.length ? (query.parameters as DuckDBValue[]) : undefined);
      const rows = reader.getRowObjectsJson() as R[];
      return { rows, numAffectedRows: BigInt(reader.rowsChanged) };
    },
    // eslint-disable-next-line require-yield
    async *streamQuery() {
      throw new Error('streaming queries are not used on DuckDB');
    },
  };
  const driver: Driver = {
    init: async () => undefined,
    acquireConnection: async () => databaseConnection,
    beginTransaction: async () => connection.raw.run('BEGIN TRANSACTION').then(() => undefined),
    commitTransaction: async () => connection.raw.run('COMMIT').then(() => undefined),
    rollbackTransaction: async () => connection.raw.run('ROLLBACK').then(() => undefined),
    releaseConnection: async () => undefined,
    destroy: async () => undefined,
  };
  return {
    createAdapter: () => new PostgresAdapter(),
    createDriver: () => driver,
    createIntrospector: (db) => new PostgresIntrospector(db),
    createQueryCompiler: () => new PostgresQueryCompiler(),
  };
}
