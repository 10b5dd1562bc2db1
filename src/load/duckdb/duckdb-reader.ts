import { quoteLiteral } from '../warehouse/identifiers.js';
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { DuckDBInstance, ResultReturnType, type DuckDBConnection, type DuckDBResult } from '@duckdb/node-api';
import { uniqueColumns, type StatementResult, type WarehouseReader } from '../warehouse/warehouse-reader.js';
import { QueryError, ReadOnlyRefusal, WarehouseBusyError } from '../warehouse/warehouse-errors.js';

/**
 * A read-only session on a DuckDB file: opened with `access_mode = READ_ONLY`, so any number of readers share it
 * and none takes the lock a writer needs; with files outside the warehouse out of reach (`enable_external_access`
 * off: no `ATTACH`, `COPY … TO`, `read_csv`), and the configuration locked, so no statement turns either back on.
 * Timestamps read in UTC, as the warehouse stores them.
 */
export class DuckDbReader implements WarehouseReader {
  private constructor(
    private readonly instance: DuckDBInstance,
    private readonly conn: DuckDBConnection,
    private readonly file: string,
  ) {}

  /** Opens `path` read-only, with `schema` as the default schema. */
  static async open(path: string, schema = 'main'): Promise<DuckDbReader> {
    const file = resolve(path);
    // DuckDB would create a missing file, and read-only it cannot: say what is missing instead
    if (!existsSync(file)) throw new QueryError(`${file} does not exist`);
    let instance: DuckDBInstance;
    try {
      instance = await DuckDBInstance.create(file, { access_mode: 'READ_ONLY', enable_external_access: 'false' });
    } catch (error) {
      const message = (error as Error).message;
      if (/lock/i.test(message)) {
        const pid = /PID (\d+)/.exec(message)?.[1];
        throw new WarehouseBusyError(
          `${file} is open for writing in another process${pid ? ` (PID ${pid})` : ''}`,
          pid ? Number(pid) : undefined,
        );
      }
      throw new QueryError(`cannot open ${file}: ${message}`);
    }
    const conn = await instance.connect();
    await conn.run(`SET TimeZone = 'UTC'`);
    await conn.run(`SET schema = '${schema.replaceAll("'", "''")}'`);
    await conn.run('SET lock_configuration = true');
    return new DuckDbReader(instance, conn, file);
  }

  readonly descriptions = {
    tables: `SELECT table_name AS name, 'table' AS kind, comment AS description FROM duckdb_tables() WHERE database_name = current_database() AND schema_name = current_schema() UNION ALL SELECT view_name, 'view', comment FROM duckdb_views() WHERE database_name = current_database() AND schema_name = current_schema() AND NOT internal ORDER BY name`,
    columns: (table: string) =>
      `SELECT column_name AS "column", data_type AS type, comment AS description FROM duckdb_columns() WHERE database_name = current_database() AND schema_name = current_schema() AND table_name = ${quoteLiteral(table)} ORDER BY column_index`,
  };

  describe(): string {
    return `duckdb ${this.file} (read-only)`;
  }

  async execute(statement: string): Promise<StatementResult> {
    let result: DuckDBResult;
    try {
      result = await this.conn.stream(statement);
    } catch (error) {
      throw refusalOrError((error as Error).message);
    }
    const columns = uniqueColumns(result.columnNames());
    if (result.returnType !== ResultReturnType.QUERY_RESULT) return { columns };
    async function* rows(): AsyncGenerator<unknown[][]> {
      try {
        for await (const batch of result.yieldRowsJson()) yield batch;
      } catch (error) {
        throw refusalOrError((error as Error).message);
      }
    }
    return { columns, rows: rows() };
  }

  async close(): Promise<void> {
    this.conn.closeSync();
    this.instance.closeSync();
  }
}

/** DuckDB's refusal of a write, said plainly; any other error as DuckDB words it, on one line. */
function refusalOrError(message: string): Error {
  const write =
    /Cannot execute statement of type "([^"]+)" on database "[^"]*" which is attached in read-only mode/.exec(message);
  if (write) return new ReadOnlyRefusal(`the warehouse is open read-only: ${write[1]} is refused`);
  if (/file system operations are disabled by configuration/.test(message))
    return new ReadOnlyRefusal(
      'the SQL prompt reads the warehouse only: files and other databases are out of its reach',
    );
  if (/configuration has been locked/.test(message))
    return new ReadOnlyRefusal('the SQL prompt does not change settings');
  return new QueryError(message.replace(/^Failed to extract statements: /, '').split('\n')[0]!);
}
