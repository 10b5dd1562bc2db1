import type { DuckDBConnection } from '@duckdb/node-api';
import { quoteIdent, quoteLiteral } from '../warehouse/identifiers.js';
import type { SqlConnection } from '../warehouse/sql-connection.js';

/** The statements an export runs on the warehouse. */
export type ExportConnection = Pick<SqlConnection, 'run' | 'all'>;

/** Rows read from PostgreSQL per fetch: memory holds one batch, whatever the size of a partition. */
const PG_BATCH_ROWS = 5000;

/**
 * The DuckDB (and so Parquet) type of a PostgreSQL column, as `format_type` names it: instants stay
 * TIMESTAMPTZ, amounts DECIMAL(18,4), days DATE; text and JSON are strings.
 */
export function duckdbTypeOf(pgType: string): string {
  const types = new Map<string, string>([
    ['timestamp with time zone', 'TIMESTAMP WITH TIME ZONE'],
    ['timestamp without time zone', 'TIMESTAMP'],
    ['date', 'DATE'],
    ['integer', 'INTEGER'],
    ['smallint', 'SMALLINT'],
    ['bigint', 'BIGINT'],
    ['boolean', 'BOOLEAN'],
    ['double precision', 'DOUBLE'],
    ['real', 'FLOAT'],
    ['text', 'VARCHAR'],
    ['character varying', 'VARCHAR'],
    ['character', 'VARCHAR'],
    ['json', 'JSON'],
    ['jsonb', 'JSON'],
    ['uuid', 'UUID'],
  ]);
  const decimal = /^numeric\((\d+),(\d+)\)$/.exec(pgType);
  // the warehouse's amounts are numeric(18,4); a bare numeric has no fixed scale, and its text keeps it exactly
  if (decimal) return Number(decimal[1]) <= 38 ? `DECIMAL(${decimal[1]},${decimal[2]})` : 'VARCHAR';
  if (pgType === 'numeric') return 'VARCHAR';
  const type = types.get(pgType.toLowerCase().replace(/\(\d+\)$/, ''));
  if (!type) throw new Error(`export: no Parquet type for the PostgreSQL type ${pgType}`);
  return type;
}

/**
 * Writes the rows of `select` (on PostgreSQL) to a Parquet file: read through a cursor in bounded batches, appended
 * to a DuckDB table of the same column types in memory, then copied out. DuckDB casts PostgreSQL's text of each
 * value (instants with their offset, decimals, days) to the column's type, so no value passes through a JS number.
 */
export async function copyThroughDuckDb(
  conn: ExportConnection,
  scratch: DuckDBConnection,
  select: string,
  columns: Array<{ name: string; type: string }>,
  file: string,
): Promise<void> {
  await scratch.run(
    `CREATE OR REPLACE TABLE part (${columns.map((c) => `${quoteIdent(c.name)} ${c.type}`).join(', ')})`,
  );
  const names = columns.map((c) => c.name);
  await conn.run(`DECLARE export_rows NO SCROLL CURSOR FOR ${select}`);
  try {
    for (;;) {
      const rows = await conn.all<Record<string, unknown>>(`FETCH ${PG_BATCH_ROWS} FROM export_rows`);
      if (rows.length === 0) break;
      for (let i = 0; i < rows.length; i += 200) await insertRows(scratch, rows.slice(i, i + 200), names, columns);
    }
  } finally {
    await conn.run('CLOSE export_rows');
  }
  await scratch.run(`COPY part TO ${quoteLiteral(file)} (FORMAT parquet, COMPRESSION zstd)`);
  await scratch.run('DROP TABLE part');
}

async function insertRows(
  scratch: DuckDBConnection,
  rows: Array<Record<string, unknown>>,
  names: string[],
  columns: Array<{ name: string; type: string }>,
): Promise<void> {
  const params: Array<string | null> = [];
  const tuples = rows.map((row) => {
    const cells = names.map((name, i) => {
      params.push(textOf(row[name]));
      return `CAST($${params.length} AS ${columns[i]!.type})`;
    });
    return `(${cells.join(', ')})`;
  });
  await scratch.run(`INSERT INTO part VALUES ${tuples.join(', ')}`, params);
}

function textOf(value: unknown): string | null {
  if (value === null || value === undefined) return null;
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value);
}
