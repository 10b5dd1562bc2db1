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
