/** A `VALUES` list of parameters, and the parameters it binds. */
export interface ValuesList {
  /** `(CAST($n AS T), …), (…)`, for `FROM (VALUES …) alias (columns)`. */
  sql: string;
  params: unknown[];
}

/**
 * Binds rows of values as a `VALUES` list, numbering parameters from `$first`. Each value is cast to its column's
 * type, so both warehouses read the list alike (PostgreSQL would otherwise take an untyped parameter as text).
 *
 * @example
 * valuesList([['2024-01-01', 3]], ['DATE', 'BIGINT'], 4).sql // '(CAST($4 AS DATE), CAST($5 AS BIGINT))'
 */
export function valuesList(
  rows: ReadonlyArray<readonly unknown[]>,
  types: readonly string[],
  first: number,
): ValuesList {
  const params: unknown[] = [];
  const tuples = rows.map((row) => {
    if (row.length !== types.length)
      throw new Error(`valuesList: a row of ${row.length} values for ${types.length} columns`);
    return `(${row.map((value, i) => `CAST($${first + params.push(value) - 1} AS ${types[i]})`).join(', ')})`;
  });
  return { sql: tuples.join(', '), params };
}

/** Types {@link columnLists} can carry: values whose text holds no comma. */
export type ListedType = 'DATE' | 'BIGINT';

const LISTED: Readonly<Record<ListedType, (value: unknown) => boolean>> = {
  DATE: (value) => typeof value === 'string' && /^\d{4}-\d{2}-\d{2}$/.test(value),
  BIGINT: (value) => (typeof value === 'number' && Number.isSafeInteger(value)) || typeof value === 'bigint',
};

/**
 * Binds rows of dates and integers as one parameter per column (the column's values joined by commas), numbering
 * parameters from `$first`, for `FROM ${sql} alias (columns)`: rows as {@link valuesList} gives them, but DuckDB
 * binds a parameter per value slowly (a year of windows took ten times the CPU as a `VALUES` list). Both
 * warehouses split a text into an array (`string_to_array`) and unnest arrays of one length side by side.
 *
 * @example
 * columnLists([['2024-01-01', 3]], ['DATE', 'BIGINT'], 4).params // ['2024-01-01', '3']
 */
export function columnLists(
  rows: ReadonlyArray<readonly unknown[]>,
  types: readonly ListedType[],
  first: number,
): ValuesList {
  if (rows.length === 0) throw new Error('columnLists: no rows');
  const columns = types.map(() => [] as string[]);
  for (const row of rows) {
    if (row.length !== types.length)
      throw new Error(`columnLists: a row of ${row.length} values for ${types.length} columns`);
    row.forEach((value, i) => {
      if (!LISTED[types[i]!](value)) throw new Error(`columnLists: ${String(value)} is no ${types[i]}`);
      columns[i]!.push(String(value));
    });
  }
  const unnested = types.map((type, i) => `unnest(CAST(string_to_array($${first + i}, ',') AS ${type}[]))`);
  return { sql: `(SELECT ${unnested.join(', ')})`, params: columns.map((c) => c.join(',')) };
}
