/**
 * Quotes an SQL identifier for DuckDB and PostgreSQL alike: wrapped in double quotes, inner quotes doubled.
 * Every identifier built at run time (pivot columns, the schema) goes through here.
 *
 * @example
 * quoteIdent('cf_x"y') // '"cf_x""y"'
 */
export function quoteIdent(name: string): string {
  if (name.includes('\u0000')) throw new Error('an identifier cannot contain NUL');
  return `"${name.replaceAll('"', '""')}"`;
}

/** `"schema"."table"`. */
export function qualified(schema: string, table: string): string {
  return `${quoteIdent(schema)}.${quoteIdent(table)}`;
}

/** An SQL string literal, inner quotes doubled: for names of the pipeline's own tables inside SQL text. */
export function quoteLiteral(text: string): string {
  if (text.includes('\u0000')) throw new Error('a literal cannot contain NUL');
  return `'${text.replaceAll("'", "''")}'`;
}
