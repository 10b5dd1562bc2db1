import pg from 'pg';
import { quoteIdent, quoteLiteral } from '../warehouse/identifiers.js';
import { uniqueColumns, type StatementResult, type WarehouseReader } from '../warehouse/warehouse-reader.js';
import { displayUrl } from './postgres-destination.js';
import { textTypes } from './postgres-connection.js';
import { excessPowers, readRolePowers } from './role-powers.js';
import { QueryError, ReadOnlyRefusal, WarehouseConnectionError } from '../warehouse/warehouse-errors.js';

/** PostgreSQL's SQLSTATE for a write in a read-only transaction. */
const READ_ONLY_SQL_TRANSACTION = '25006';

/** What every session of the reader starts with, and is brought back to after each statement. */
const SESSION_SETTINGS = (schema: string) =>
  `SET search_path TO ${quoteIdent(schema)}; SET TIME ZONE 'UTC'; SET DateStyle TO 'ISO, YMD'`;

/**
 * A read-only session on a PostgreSQL warehouse: the session defaults to read-only transactions, and each
 * statement runs alone (extended protocol: one statement per call) in a transaction begun `READ ONLY` and rolled
 * back, so neither a `SET` nor a `COMMIT` in what an analyst types lets a write through. After each statement the
 * session is reset (`pg_advisory_unlock_all()`, `DISCARD ALL`): no advisory lock, setting, prepared statement,
 * cursor or temporary object outlives the statement that made it, so a session left open holds nothing the
 * pipeline waits for. This is no sandbox: a role that may write, read server files or run programs can still do
 * so through functions; analysts need a read-only role (docs/operations.md). Dates, timestamps (UTC) and JSON
 * arrive as PostgreSQL's text.
 */
export class PostgresReader implements WarehouseReader {
  private constructor(
    private readonly client: pg.Client,
    private readonly url: string,
    private readonly schema: string,
    /** What the session's role may do that an analyst's should not (empty for a read-only role). */
    readonly excessPowers: readonly string[],
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
      await client.query(SESSION_SETTINGS(schema));
    } catch (error) {
      await client.end().catch(() => undefined);
      throw new WarehouseConnectionError(
        `cannot connect to the warehouse ${displayUrl(url)}: ${(error as Error).message.split(url).join('[URL]')}`,
      );
    }
    const powers = await readRolePowers(async (sql, params) => (await client.query(sql, params)).rows, schema).catch(
      () => undefined,
    );
    return new PostgresReader(
      client,
      url,
      schema,
      powers ? excessPowers(powers, true).map((p) => `the role ${powers.role} ${p}`) : [],
    );
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
      const result = await this.client.query({
        text: statement,
        rowMode: 'array',
        queryMode: 'extended',
      } as pg.QueryArrayConfig);
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
      if (e.code === READ_ONLY_SQL_TRANSACTION)
        throw new ReadOnlyRefusal(`the warehouse is open read-only: ${e.message}`);
      throw new QueryError(e.message.split('\n')[0]!);
    } finally {
      await this.reset();
    }
  }

  /**
   * Brings the session back to how it was opened. `DISCARD ALL` cannot run in a transaction, so the statement's
   * is rolled back first (and any the analyst began with its own `BEGIN`); a session that cannot be reset is
   * ended rather than kept with what it may hold.
   */
  private async reset(): Promise<void> {
    try {
      await this.client.query('ROLLBACK');
      await this.client.query('SELECT pg_advisory_unlock_all()');
      await this.client.query('DISCARD ALL');
      await this.client.query(SESSION_SETTINGS(this.schema));
    } catch (error) {
      await this.client.end().catch(() => undefined);
      throw new QueryError(
        `the session could not be reset after the statement, and is closed: ${(error as Error).message.split('\n')[0]!}`,
      );
    }
  }

  async close(): Promise<void> {
    await this.client.end();
  }
}
