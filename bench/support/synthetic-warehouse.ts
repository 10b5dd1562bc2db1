import { DuckDbDestination } from '../../src/load/duckdb/duckdb-destination.js';

/**
 * Fills a new DuckDB warehouse (the real tables, migrated) with `accounts` customers and `postings` loyalty
 * postings made up in SQL, the shape a loaded program has: unique customers with every profile column set, postings
 * spread over a year across them with 40 branches, 5 brands and 4 tiers. Minutes, where loading them from the
 * emulator would take hours. With `windowsInOrder`, the rows of each load window (`_window_start`) lie together, in
 * window order, as a warehouse loaded night after night holds them (a posting in the window of its day); without,
 * every window's rows are spread over the whole table.
 */
export async function fillSyntheticWarehouse(
  path: string,
  counts: { accounts: number; postings: number },
  options: { windowsInOrder?: boolean } = {},
): Promise<void> {
  const accountWindow = options.windowsInOrder
    ? `CAST(i * 366 // ${Math.max(counts.accounts, 1)} AS INTEGER)`
    : 'CAST(i % 366 AS INTEGER)';
  const postingWindow = options.windowsInOrder ? 'CAST(i * 3 // 86400 AS INTEGER)' : 'CAST(i % 366 AS INTEGER)';
  const warehouse = await DuckDbDestination.open(path, 'main', { memoryLimit: '1GB' });
  try {
    await warehouse.migrate();
    await warehouse.withConnection(async (conn) => {
      await conn.run(
        `INSERT INTO accounts SELECT printf('C%09d', i), printf('30690%07d', i), printf('c%d@example.com', i), 'Name' || (i % 997), 'Surname' || (i % 1009),
            DATE '1970-01-01' + CAST(i % 15000 AS INTEGER), 'POS', TIMESTAMPTZ '2020-01-01 00:00:00+00' + to_seconds(i * 60), 'GR',
            TIMESTAMPTZ '2019-01-01 00:00:00+00' + to_seconds(i * 30), TIMESTAMPTZ '2019-06-01 00:00:00+00' + to_seconds(i * 30), 'GR',
            CASE WHEN i % 2 = 0 THEN 'F' ELSE 'M' END, 'Athens', 'el', DATE '2024-01-01' + ${accountWindow}, 'bench', TIMESTAMPTZ '2024-12-31 00:00:00+00', NULL
           FROM range(${counts.accounts}) r(i)`,
      );
      await conn.run(
        `INSERT INTO loyalty_postings SELECT md5(CAST(i AS VARCHAR)), printf('C%09d', i % ${counts.accounts}), TIMESTAMPTZ '2024-01-01 00:00:00+00' + to_seconds(i * 3),
            TIMESTAMPTZ '2024-01-01 00:00:00+00' + to_seconds(i * 3 - 60), CAST((i % 500) / 10.0 AS DECIMAL(18,4)), CAST((i % 500) / 100.0 AS DECIMAL(18,4)),
            CAST(0 AS DECIMAL(18,4)), CAST(0 AS DECIMAL(18,4)), CAST(i % 300 AS DECIMAL(18,4)), 'EUR', printf('R-%d', i), 'Branch ' || (i % 40), 'Brand ' || (i % 5),
            'GR', 'Greece', 1 + i % 4, 'Tier ' || (1 + i % 4), 1, 0, DATE '2024-01-01' + ${postingWindow}, 'bench', TIMESTAMPTZ '2024-12-31 00:00:00+00', NULL
           FROM range(${counts.postings}) r(i)`,
      );
      await conn.run('CHECKPOINT');
    });
  } finally {
    await warehouse.close();
  }
}
