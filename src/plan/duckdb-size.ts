/**
 * A DuckDB size as the jobs file states it (`128MB`, `1GiB`): what `memory_limit`, `checkpoint_threshold` and
 * `staging_memory` take. KB, MB and GB count in thousands, as DuckDB's do.
 */
export const DUCKDB_SIZE = /^(\d+(?:\.\d+)?)\s*(KB|MB|GB|KiB|MiB|GiB)$/i;

const UNITS = new Map([
  ['kb', 1e3],
  ['mb', 1e6],
  ['gb', 1e9],
  ['kib', 2 ** 10],
  ['mib', 2 ** 20],
  ['gib', 2 ** 30],
]);

/** Bytes of a {@link DUCKDB_SIZE}. */
export function duckdbSizeBytes(size: string): number {
  const match = DUCKDB_SIZE.exec(size.trim());
  if (!match) throw new Error(`not a size: ${size}`);
  return Math.round(Number(match[1]) * UNITS.get(match[2]!.toLowerCase())!);
}
