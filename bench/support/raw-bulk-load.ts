import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { type DuckDBAppender, type DuckDBConnection, DuckDBInstance } from '@duckdb/node-api';
import pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import { DEFAULT_MEMORY_LIMIT } from '../../src/load/duckdb/duckdb-destination.js';
import { quoteIdent } from '../../src/load/warehouse/identifiers.js';
import { copyTextRow } from '../../src/load/postgres/copy-text-row.js';
import type { Row, TableSpec } from '../../src/load/table-spec.js';
import { duckdbDialect, postgresDialect, type WarehouseDialect } from '../../src/load/warehouse/warehouse-dialect.js';
import type { RowSink, StagedRows } from './row-sink.js';

/** Rows gathered per COPY of the raw PostgreSQL load: one statement per this many rows, as a bulk load would. */
const COPY_ROWS = 50_000;

/** A table of the target's data columns and types, no key: the raw load's rows include every version of a record. */
function plainTableSql(dialect: WarehouseDialect, spec: TableSpec): string {
  return `CREATE TABLE ${quoteIdent(spec.name)} (${spec.columns.map((c) => `${quoteIdent(c.name)} ${dialect.typeName(c.type)}`).join(', ')})`;
}

function valuesOf(spec: TableSpec, row: Row): Array<string | number | null> {
  return spec.columns.map((c) => row[c.name] ?? null);
}

/**
 * The raw DuckDB bulk load: one appender per table into a plain table of the target's columns and types (no
 * key, no index, no merge), values appended as text for DuckDB to cast
 * (the fastest way measured), kept open for the whole load and closed at the end; DuckDB has the loader's
 * memory limit.
 */
export class DuckDbRawLoad implements RowSink {
  readonly name = 'duckdb raw';
  readonly takes = 'tables';
  private readonly appenders = new Map<string, DuckDBAppender>();

  private constructor(
    private readonly instance: DuckDBInstance,
    private readonly conn: DuckDBConnection,
  ) {}

  static async open(path: string): Promise<DuckDbRawLoad> {
    const instance = await DuckDBInstance.create(path, { memory_limit: DEFAULT_MEMORY_LIMIT });
    return new DuckDbRawLoad(instance, await instance.connect());
  }

  async beginSpan(): Promise<void> {}

  async append(spec: TableSpec, rows: StagedRows): Promise<void> {
    let appender = this.appenders.get(spec.name);
    if (!appender) {
      await this.conn.run(plainTableSql(duckdbDialect, spec));
      appender = await this.conn.createAppender(spec.name);
      this.appenders.set(spec.name, appender);
    }
    for (const { row } of rows) {
      for (const value of valuesOf(spec, row)) {
        if (value === null) appender.appendNull();
        else appender.appendVarchar(typeof value === 'string' ? value : String(value));
      }
      appender.endRow();
    }
  }

  async endSpan(): Promise<void> {}

  async finish(): Promise<void> {
    for (const appender of this.appenders.values()) appender.closeSync();
    this.appenders.clear();
    // the rows written to the database file, as the loader's commits leave them
    await this.conn.run('CHECKPOINT');
  }

  async close(): Promise<void> {
    this.conn.closeSync();
    this.instance.closeSync();
  }
}

/**
 * The raw PostgreSQL bulk load: `COPY … FROM STDIN` (text format, built by the loader's own `copyTextRow`)
 * into a plain table of the target's columns and types (no key, no index, no merge), 50,000 rows per COPY.
 */
export class PostgresRawLoad implements RowSink {
  readonly name = 'postgres raw';
  readonly takes = 'tables';
  private readonly pending = new Map<string, { spec: TableSpec; rows: Array<Array<string | number | null>> }>();

  private constructor(private readonly client: pg.Client) {}

  static async open(url: string): Promise<PostgresRawLoad> {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    await client.query(`SET TIME ZONE 'UTC'`);
    return new PostgresRawLoad(client);
  }

  async beginSpan(): Promise<void> {}

  async append(spec: TableSpec, rows: StagedRows): Promise<void> {
    let pending = this.pending.get(spec.name);
    if (!pending) {
      await this.client.query(plainTableSql(postgresDialect, spec));
      this.pending.set(spec.name, (pending = { spec, rows: [] }));
    }
    for (const { row } of rows) pending.rows.push(valuesOf(spec, row));
    if (pending.rows.length >= COPY_ROWS) await this.flush(pending);
  }

  async endSpan(): Promise<void> {}

  async finish(): Promise<void> {
    for (const pending of this.pending.values()) await this.flush(pending);
  }

  async close(): Promise<void> {
    await this.client.end();
  }

  private async flush(pending: { spec: TableSpec; rows: Array<Array<string | number | null>> }): Promise<void> {
    if (pending.rows.length === 0) return;
    const rows = pending.rows;
    pending.rows = [];
    const sql = `COPY ${quoteIdent(pending.spec.name)} (${pending.spec.columns.map((c) => quoteIdent(c.name)).join(', ')}) FROM STDIN`;
    await pipeline(Readable.from(copyText(rows)), this.client.query(copyFrom(sql)));
  }
}

function* copyText(rows: ReadonlyArray<ReadonlyArray<string | number | null>>): Generator<string> {
  let chunk = '';
  for (const row of rows) {
    chunk += copyTextRow(row);
    if (chunk.length >= 256 * 1024) {
      yield chunk;
      chunk = '';
    }
  }
  if (chunk.length > 0) yield chunk;
}
