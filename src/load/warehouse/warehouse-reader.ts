/** One statement's result: its columns, and its rows in batches, with JSON-friendly values. */
export interface StatementResult {
  /** Column names, made unique (`a`, `a:1`). */
  columns: string[];
  /** The rows, batch by batch; absent for a statement that returns none (`SET`, …). */
  rows?: AsyncIterable<unknown[][]>;
}

/**
 * A read-only session on a warehouse, for the `sql` command: DuckDB (the copy published for analysts) or
 * PostgreSQL. No statement it runs can change the warehouse.
 */
export interface WarehouseReader {
  /** What it reads, for the prompt's first line (no credentials). */
  describe(): string;
  /**
   * Queries of the descriptions (comments) of the session's schema: `tables` lists each table and view with its
   * description; `columns(table)` each column of one, with its type and description.
   */
  readonly descriptions: { tables: string; columns(table: string): string };
  /** Runs one statement. @throws ReadOnlyRefusal for a statement that would write, QueryError for any other failure. */
  execute(statement: string): Promise<StatementResult>;
  close(): Promise<void>;
}

/** Makes repeated column names unique, as an object per row needs them: `a`, `a:1`, `a:2`. */
export function uniqueColumns(names: readonly string[]): string[] {
  const seen = new Map<string, number>();
  return names.map((name) => {
    const n = seen.get(name) ?? 0;
    seen.set(name, n + 1);
    return n === 0 ? name : `${name}:${n}`;
  });
}
