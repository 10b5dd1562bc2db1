import { DuckDBInstance, type DuckDBConnection, type DuckDBResultReader, type DuckDBValue } from '@duckdb/node-api';
import {
  type CompiledQuery,
  Kysely,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
  type DatabaseConnection,
  type Dialect,
  type Driver,
  type QueryResult,
} from 'kysely';
import { quoteIdent } from '../warehouse/identifiers.js';
import type { LedgerTables, SqlConnection } from '../warehouse/sql-connection.js';

/**
 * What every statement of a connection goes through: lets work that must not overlap a statement on any connection
 * of the instance (a trim of its buffer pool) wait for them, and them for it.
 */
export interface StatementGate {
  statement<T>(run: () => Promise<T>): Promise<T>;
}

const UNGATED: StatementGate = { statement: (run) => run() };

/**
 * Runs `fn` on a connection to a DuckDB of its own (`path`, or `:memory:`, opened with `options`), and closes both
 * whatever happens: for work beside the warehouse's instance (a copy rewritten or proved readable).
 */
export async function withDuckDb<T>(
  path: string,
  options: Record<string, string>,
  fn: (conn: DuckDBConnection) => Promise<T>,
): Promise<T> {
  const instance = await DuckDBInstance.create(path, options);
  try {
    const conn = await instance.connect();
    try {
      return await fn(conn);
    } finally {
      conn.closeSync();
    }
  } finally {
    instance.closeSync();
  }
}

function values(params: readonly unknown[]): DuckDBValue[] | undefined {
  return params.length ? (params as DuckDBValue[]) : undefined;
}

/** A {@link SqlConnection} over one DuckDB connection. */
export class DuckDbSqlConnection implements SqlConnection {
  readonly db: Kysely<LedgerTables>;
  readonly schemaSql: string;

  constructor(
    readonly raw: DuckDBConnection,
    schema: string,
    private readonly gate: StatementGate = UNGATED,
  ) {
    this.schemaSql = quoteIdent(schema);
    this.db = new Kysely<LedgerTables>({ dialect: singleConnectionDialect(this) }).withSchema(schema);
  }

  async run(sql: string, params: readonly unknown[] = []): Promise<void> {
    await this.gate.statement(() => this.raw.run(sql, values(params)));
  }

  async all<T>(sql: string, params: readonly unknown[] = []): Promise<T[]> {
    return (await this.read(sql, params)).getRowObjectsJson() as T[];
  }

  /** Runs one statement through the gate and reads its whole result. */
  read(sql: string, params: readonly unknown[] = []): Promise<DuckDBResultReader> {
    return this.gate.statement(() => this.raw.runAndReadAll(sql, values(params)));
  }

  async transaction<T>(fn: () => Promise<T>): Promise<T> {
    await this.run('BEGIN TRANSACTION');
    try {
      const result = await fn();
      await this.run('COMMIT');
      return result;
    } catch (error) {
      await this.run('ROLLBACK').catch(() => undefined);
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
      const reader = await connection.read(query.sql, query.parameters);
      const rows = reader.getRowObjectsJson() as R[];
      return { rows, numAffectedRows: BigInt(reader.rowsChanged) };
    },
    // Kysely's driver interface asks for a generator; DuckDB never streams here
    // eslint-disable-next-line require-yield
    async *streamQuery() {
      throw new Error('streaming queries are not used on DuckDB');
    },
  };
  const driver: Driver = {
    init: async () => undefined,
    acquireConnection: async () => databaseConnection,
    beginTransaction: async () => connection.run('BEGIN TRANSACTION'),
    commitTransaction: async () => connection.run('COMMIT'),
    rollbackTransaction: async () => connection.run('ROLLBACK'),
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
