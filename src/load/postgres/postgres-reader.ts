import pg from 'pg';
import { quoteIdent, quoteLiteral } from '../identifiers.js';
import { QueryError, ReadOnlyRefusal, uniqueColumns, type StatementResult, type WarehouseReader } from '../warehouse-reader.js';
import { displayUrl, WarehouseConnectionError } from './postgres-destination.js';
import { textTypes } from './postgres-connection.js';

/** PostgreSQL's SQLSTATE for a write in a read-only transaction. */
const READ_ONLY_SQL_TRANSACTION = '25006';

/**
 * A read-only session on a PostgreSQL warehouse: the session defaults to read-only transactions, and each
 * statement runs alone (extended protocol: one statement per call) in a transaction begun `READ ONLY` and rolled
 * back, so neither a `SET` nor a `COMMIT` in what an analyst types lets a write through. Prefer a read-only role
 * for analysts all the same. Dates, timestamps (UTC) and JSON arrive as PostgreSQL's text.
 */
export class PostgresReader implements WarehouseReader {
  private constructor(
    private readonly client: pg.Client,
    private readonly url: string,
  ) {}

  static async open(url: string, schema = 'public'): Promise<PostgresReader> {
    const client = new pg.Client({
      connectionString: url,
      types: textTypes,
      application_name: 'loyalty-etl sql',
      options: '-c default_transaction_read_only=on',
    });
    client.on('error', () => undefined);
    try {
      await client.connect();
      await client.query(`SET search_path TO ${quoteIdent(schema)}; SET TIME ZONE 'UTC'; SET DateStyle TO 'ISO, YMD'`);
    } catch (error) {
      await client.end().catch(() => undefined);
      throw new WarehouseConnectionError(`cannot connect to the warehouse ${displayUrl(url)}: ${(error as Error).message.split(url).join('[URL]')}`);
    }
    return new PostgresReader(client, url);
  }

  readonly descriptions = {
    tables: `SELECT c.relname AS name, CASE WHEN c.relkind = 'v' THEN 'view' ELSE 'table' END AS kind, obj_description(c.oid, 'pg_class') AS description
               FROM pg_class c WHERE c.relnamespace = CAST(current_schema() AS regnamespace) AND c.relkind IN ('r', 'v', 'p') ORDER BY name`,
    columns: (table: string) =>
      `SELECT a.attname AS "column", format_type(a.atttypid, a.atttypmod) AS type, col_description(a.attrelid, a.attnum) AS description
         FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid
        WHERE c.relnamespace = CAST(current_schema() AS regnamespace) AND c.relname = ${quoteLiteral(table)} AND a.attnum > 0 AND NOT a.attisdropped ORDER BY a.attnum`,
  };

  describe(): string {
    return `postgres ${displayUrl(this.url)} (read-only)`;
  }

  async execute(statement: string): Promise<StatementResult> {
    await this.client.query('BEGIN READ ONLY');
    try {
      const result = await this.client.query({ text: statement, rowMode: 'array', queryMode: 'extended' } as pg.QueryArrayConfig);
      const columns = uniqueColumns(result.fields.map((f) => f.name));
      if (result.fields.length === 0) return { columns };
      const rows = result.rows as unknown[][];
      return {
        columns,
        rows: (async function* () {
          yield rows;
        })(),
      };
    } catch (error) {
      const e = error as Error & { code?: string };
      if (e.code === READ_ONLY_SQL_TRANSACTION) throw new ReadOnlyRefusal(`the warehouse is open read-only: ${e.message}`);
      throw new QueryError(e.message.split('\n')[0]!);
    } finally {
      await this.client.query('ROLLBACK').catch(() => undefined);
    }
  }

  async close(): Promise<void> {
    await this.client.end();
  }
}
