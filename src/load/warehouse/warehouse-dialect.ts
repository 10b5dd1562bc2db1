import { quoteIdent, quoteLiteral } from './identifiers.js';
import type { ColumnSpec, ColumnType } from '../table-spec.js';

/** What differs between the warehouses in the SQL the loader generates; everything else is shared. */
export interface WarehouseDialect {
  readonly name: 'duckdb' | 'postgres';
  /** The type name of a shared column type. */
  typeName(type: ColumnType): string;
  /** `CREATE TEMP TABLE` suffix, e.g. PostgreSQL's `ON COMMIT PRESERVE ROWS`. */
  readonly tempTableSuffix: string;
  /** Staging column `column` (a JSON object of text values) as an object {@link objectValue} looks names up in. */
  jsonObject(column: string): string;
  /**
   * A select list of every column of the rows `alias`, where the staging columns `columns` (quoted already) hold
   * their objects ({@link jsonObject}) under their own names instead of their JSON text: parsed once, and not
   * carried twice.
   */
  withObjects(alias: string, columns: string[]): string;
  /** The value `object` holds for the name `name` (an expression or a parameter), or NULL. */
  objectValue(object: string, name: string): string;
  /**
   * Rows to read FROM: one per entry of the object `object` (an expression over the rows of `source`, which it
   * reads as `s`, made by {@link jsonObject}), with the columns `keep` and the entry as `name` and `value` (all of them quoted already).
   */
  objectEntries(source: string, keep: string[], object: string, name: string, value: string): string;
  /**
   * Rows to read FROM: one per element of the JSON array `array` (an expression over the rows of `source`, which it
   * reads as `s`), each element an array of the values of `columns` in their order, with the columns `keep` (quoted
   * already).
   */
  arrayRows(source: string, keep: string[], array: string, columns: readonly ColumnSpec[]): string;
  /** A query of the distinct names in the JSON objects of the staging column `column` of `source` (read as `s`), as `name`: no value is read. */
  jsonObjectNames(source: string, column: string, name: string): string;
  /**
   * Rows go into a target table in the order of its key. PostgreSQL maintains the primary key's B-tree row by row,
   * and rows in key order fill its pages one after the other: for postings that saves more than the sort costs.
   * DuckDB's tables declare no key.
   */
  readonly insertsInKeyOrder: boolean;
  /**
   * A condition: `value` is not among the values of `list`, a subquery of one column. Neither holds NULL. DuckDB runs
   * `NOT IN` as a hash join, where it would decorrelate a `NOT EXISTS` of the staged rows by first copying all of
   * them; PostgreSQL runs `NOT EXISTS` as a hash anti join, and hashes `NOT IN` only while it fits `work_mem`.
   */
  notAmong(value: string, list: string): string;
  /**
   * An MD5 hex digest of `values` (expressions of any shared column type, read as text) and `objects` (JSON objects of
   * text values as staged, or jsonb), the same for the same content whatever order an object's members came in:
   * the content hash that versions of a history compare (`history-statements.ts`). The sessions' time zone is UTC, so
   * a timestamp reads as the same text every time.
   */
  contentHash(values: string[], objects: string[]): string;
  /**
   * A pseudo-column that names a row of a table for the length of a statement (DuckDB's `rowid`), for a query that
   * sorts a few columns of its rows and then reads the others back by it; undefined where there is none to use.
   */
  readonly rowId?: string;
  /** A condition: the text `value` matches the regular expression `pattern` (POSIX, written by the loader) whole. */
  fullMatch(value: string, pattern: string): string;
  /** SHA-256 of the text `value`, as 64 lower-case hex digits. */
  sha256(value: string): string;
  /**
   * A query of the comments in schema `$1`: one row per table or view (`kind` `table` or `view`, `column_name` NULL)
   * and per column of them (`kind` NULL, its `data_type`), with its `comment` (NULL when it has none), columns in
   * their order.
   */
  readonly commentsQuery: string;
  /** A text as an SQL literal for `COMMENT ON … IS`, which takes no parameter: whatever it holds. */
  commentLiteral(text: string): string;
}

function duckdbJsonObject(column: string): string {
  return `CAST(CAST(${column} AS JSON) AS MAP(VARCHAR, VARCHAR))`;
}

/**
 * The MD5 of the text `CAST(json_array(values as text…, objects as sorted entries…) AS VARCHAR)`, the hash every stored
 * observation and version holds (a JSON text keeps its members' order: the sorted entries of its map are what is
 * compared). The same text is written without `json_array` parsing the objects' JSON back to write it again (a
 * quarter of the hash's CPU): the values' array without its `]`, then each object's JSON after a comma
 * (test/load/content-hash.test.ts holds the two forms equal on awkward values).
 */
function duckdbContentHash(values: string[], objects: string[]): string {
  const texts = values.map((v) => `CAST(${v} AS VARCHAR)`);
  if (objects.length === 0) return `md5(CAST(json_array(${texts.join(', ')}) AS VARCHAR))`;
  // json_array writes a NULL object as null, where concat would skip it
  const entries = objects.map(
    (o) => `COALESCE(CAST(to_json(list_sort(map_entries(${duckdbJsonObject(o)}))) AS VARCHAR), 'null')`,
  );
  const head = values.length === 0 ? `'['` : `left(CAST(json_array(${texts.join(', ')}) AS VARCHAR), -1), ','`;
  return `md5(concat(${head}, ${entries.join(`, ',', `)}, ']'))`;
}

export const duckdbDialect: WarehouseDialect = {
  name: 'duckdb',
  typeName: (type) =>
    ({
      text: 'VARCHAR',
      date: 'DATE',
      timestamptz: 'TIMESTAMPTZ',
      decimal: 'DECIMAL(18,4)',
      double: 'DOUBLE',
      integer: 'INTEGER',
      boolean: 'BOOLEAN',
      json: 'JSON',
    })[type],
  tempTableSuffix: '',
  insertsInKeyOrder: false,
  // a MAP, parsed from the JSON once per row; a missing name reads as NULL
  jsonObject: duckdbJsonObject,
  withObjects: (alias, columns) =>
    columns.length === 0
      ? `${alias}.*`
      : `${alias}.* REPLACE (${columns.map((c) => `${duckdbJsonObject(`${alias}.${c}`)} AS ${c}`).join(', ')})`,
  objectValue: (object, name) => `${object}[${name}]`,
  objectEntries: (source, keep, object, name, value) =>
    `(SELECT ${keep.join(', ')}, unnest(map_keys("_object")) AS ${name}, unnest(map_values("_object")) AS ${value} ` +
    `FROM (SELECT ${keep.join(', ')}, ${object} AS "_object" FROM ${source} s) o)`,
  // each element a list of texts (a JSON number or Boolean reads as its text), cast to its column's type
  arrayRows: (source, keep, array, columns) =>
    `(SELECT ${[...keep, ...columns.map((c, i) => `CAST("_element"[${i + 1}] AS ${duckdbDialect.typeName(c.type)}) AS ${quoteIdent(c.name)}`)].join(', ')} ` +
    `FROM (SELECT ${keep.join(', ')}, unnest(CAST(CAST(${array} AS JSON) AS VARCHAR[][])) AS "_element" FROM ${source} s) o)`,
  jsonObjectNames: (source, column, name) =>
    `SELECT DISTINCT unnest(json_keys(s.${column})) AS ${name} FROM ${source} s`,
  notAmong: (value, list) => `${value} NOT IN ${list}`,
  rowId: 'rowid',
  contentHash: duckdbContentHash,
  fullMatch: (value, pattern) => `regexp_full_match(${value}, ${quoteLiteral(pattern)})`,
  sha256: (value) => `sha256(${value})`,
  commentsQuery: `SELECT table_name, 'table' AS kind, NULL AS column_name, NULL AS data_type, comment, 0 AS position FROM duckdb_tables() WHERE database_name = current_database() AND schema_name = $1
     UNION ALL SELECT view_name, 'view', NULL, NULL, comment, 0 FROM duckdb_views() WHERE database_name = current_database() AND schema_name = $1 AND NOT internal
     UNION ALL SELECT table_name, NULL, column_name, data_type, comment, column_index + 1 FROM duckdb_columns() WHERE database_name = current_database() AND schema_name = $1
     ORDER BY 1, 6`,
  // DuckDB's strings have no escapes: a quote doubled is the whole rule
  commentLiteral: (text) => quoteLiteral(text.replaceAll('\u0000', '')),
};

export const postgresDialect: WarehouseDialect = {
  name: 'postgres',
  typeName: (type) =>
    ({
      text: 'text',
      date: 'date',
      timestamptz: 'timestamptz',
      decimal: 'numeric(18,4)',
      double: 'double precision',
      integer: 'integer',
      boolean: 'boolean',
      json: 'jsonb',
    })[type],
  tempTableSuffix: '',
  insertsInKeyOrder: true,
  // staged as jsonb already
  jsonObject: (column) => column,
  // jsonb is an object already
  withObjects: (alias) => `${alias}.*`,
  objectValue: (object, name) => `(${object} ->> CAST(${name} AS text))`,
  objectEntries: (source, keep, object, name, value) =>
    `(SELECT ${keep.map((k) => `s.${k}`).join(', ')}, e.key AS ${name}, e.value AS ${value} FROM ${source} s CROSS JOIN LATERAL jsonb_each_text(${object}) e)`,
  arrayRows: (source, keep, array, columns) =>
    `(SELECT ${[...keep.map((k) => `s.${k}`), ...columns.map((c, i) => `CAST(e.value ->> ${i} AS ${postgresDialect.typeName(c.type)}) AS ${quoteIdent(c.name)}`)].join(', ')} ` +
    `FROM ${source} s CROSS JOIN LATERAL jsonb_array_elements(${array}) e)`,
  jsonObjectNames: (source, column, name) =>
    `SELECT DISTINCT jsonb_object_keys(s.${column}) AS ${name} FROM ${source} s`,
  notAmong: (value, list) => `NOT EXISTS (SELECT 1 FROM ${list} l (v) WHERE l.v = ${value})`,
  // jsonb orders an object's members itself
  contentHash: (values, objects) =>
    `md5(CAST(jsonb_build_array(${[...values.map((v) => `CAST(${v} AS text)`), ...objects].join(', ')}) AS text))`,
  fullMatch: (value, pattern) => `(${value} ~ ${quoteLiteral(`^(${pattern})$`)})`,
  sha256: (value) => `encode(sha256(convert_to(${value}, 'UTF8')), 'hex')`,
  commentsQuery: `SELECT c.relname AS table_name, CASE WHEN c.relkind = 'v' THEN 'view' ELSE 'table' END AS kind, CAST(NULL AS text) AS column_name,
            CAST(NULL AS text) AS data_type, obj_description(c.oid, 'pg_class') AS comment, 0 AS position
       FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname = $1 AND c.relkind IN ('r', 'v', 'p')
     UNION ALL
     SELECT c.relname, NULL, a.attname, format_type(a.atttypid, a.atttypmod), col_description(c.oid, a.attnum), a.attnum
       FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
      WHERE n.nspname = $1 AND c.relkind IN ('r', 'v', 'p')
     ORDER BY 1, 6`,
  // an escape string, so the literal means the same whatever standard_conforming_strings says
  commentLiteral: (text) => `E'${text.replaceAll('\u0000', '').replaceAll('\\', '\\\\').replaceAll("'", "''")}'`,
};
