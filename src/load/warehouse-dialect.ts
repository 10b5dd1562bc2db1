import type { ColumnType } from './table-spec.js';

/** What differs between the warehouses in the SQL the loader generates; everything else is shared. */
export interface WarehouseDialect {
  readonly name: 'duckdb' | 'postgres';
  /** The type name of a shared column type. */
  typeName(type: ColumnType): string;
  /** `CREATE TEMP TABLE` suffix, e.g. PostgreSQL's `ON COMMIT PRESERVE ROWS`. */
  readonly tempTableSuffix: string;
}

export const duckdbDialect: WarehouseDialect = {
  name: 'duckdb',
  typeName: (type) => ({ text: 'VARCHAR', date: 'DATE', timestamptz: 'TIMESTAMPTZ', decimal: 'DECIMAL(18,4)', integer: 'INTEGER', boolean: 'BOOLEAN', json: 'JSON' })[type],
  tempTableSuffix: '',
};

export const postgresDialect: WarehouseDialect = {
  name: 'postgres',
  typeName: (type) => ({ text: 'text', date: 'date', timestamptz: 'timestamptz', decimal: 'numeric(18,4)', integer: 'integer', boolean: 'boolean', json: 'jsonb' })[type],
  tempTableSuffix: '',
};
