import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Destination } from '../../src/load/destination.js';
import { openDestination } from '../../src/load/warehouses.js';
import type { ColumnType } from '../../src/load/table-spec.js';
import { duckdbDialect, postgresDialect } from '../../src/load/warehouse/warehouse-dialect.js';
import { testDestinations } from '../helpers/destinations.js';

/**
 * The content hash every stored observation and version holds, as first written on each warehouse: a new way of
 * writing it must give the same hash for every row, or existing histories would get versions for nothing.
 */
const STORED_HASH = {
  duckdb: (values: string[], objects: string[]) =>
    `md5(CAST(json_array(${[...values.map((v) => `CAST(${v} AS VARCHAR)`), ...objects.map((o) => `to_json(list_sort(map_entries(CAST(CAST(${o} AS JSON) AS MAP(VARCHAR, VARCHAR)))))`)].join(', ')}) AS VARCHAR))`,
  postgres: (values: string[], objects: string[]) =>
    `md5(CAST(jsonb_build_array(${[...values.map((v) => `CAST(${v} AS text)`), ...objects].join(', ')}) AS text))`,
};

const COLUMNS: Array<[string, ColumnType]> = [
  ['t', 'text'],
  ['d', 'date'],
  ['ts', 'timestamptz'],
  ['n', 'decimal'],
  ['f', 'double'],
  ['i', 'integer'],
  ['b', 'boolean'],
  ['o1', 'json'],
  ['o2', 'json'],
];

/** Text, NULLs, quotes, backslashes, control characters, scripts and emoji, decimals, times before 1970 and with microseconds, empty and missing objects. */
const ROWS: Array<Array<string | null>> = [
  ['plain', '2024-01-31', '2024-01-31 23:59:59+00', '1.5', '0.1', '42', 'true', '{"b":"2","a":"1"}', '{}'],
  [null, null, null, null, null, null, null, null, null],
  [
    'say "cheese" \\ back\\slash',
    '1901-12-13',
    '1969-07-20 20:17:40.123456+00',
    '-0.0001',
    '-1e-7',
    '-2147483648',
    'false',
    '{"he said \\"hi\\"":"say \\"cheese\\"","Robert\'); DROP TABLE accounts;--":"x","back\\\\slash":"\\\\"}',
    '{"z":null,"a":null}',
  ],
  [
    'καφές 🍕 日本語フィールド Ünïcödé',
    '2000-02-29',
    '2038-01-19 03:14:08+00',
    '12345678901234.5678',
    '1.7976931348623157e308',
    '0',
    null,
    '{"🎉 party guest":"true","日本語フィールド":"καφές","Ünïcödé naam":"a, b; c","Favourite Store":"O\'Brien\'s pick"}',
    '{"tab\\there":"line\\nbreak","ctl":"\\u0001\\u001f","slash":"a/b","sep":"\\u2028"}',
  ],
  [
    '',
    '2024-03-31',
    '2024-03-31 00:59:59.5+00',
    '0',
    '3.0',
    '7',
    'true',
    '{"n":1,"f":2.5,"t":true,"e":"","a":"1","A":"2","aa":"3","a b":"4","a-b":"5"}',
    '{"x":"1"}',
  ],
];

describe.each(testDestinations)('the content hash of a history, on $name', (target) => {
  let destination: Destination;
  beforeAll(async () => {
    destination = await openDestination((await target.fresh()).config);
    const dialect = target.name === 'duckdb' ? duckdbDialect : postgresDialect;
    await destination.withConnection(async (conn) => {
      await conn.run(
        `CREATE TABLE awkward (id INTEGER, ${COLUMNS.map(([name, type]) => `${name} ${dialect.typeName(type)}`).join(', ')})`,
      );
      for (const [i, row] of ROWS.entries())
        await conn.run(
          `INSERT INTO awkward VALUES ($1, ${COLUMNS.map(([, type], c) => `CAST($${c + 2} AS ${dialect.typeName(type)})`).join(', ')})`,
          [i, ...row],
        );
    });
  });
  afterAll(async () => destination.close());

  const shapes: Array<[string, string[], string[]]> = [
    ['values and two objects', ['t', 'd', 'ts', 'n', 'f', 'i', 'b'], ['o1', 'o2']],
    ['values and one object', ['t', 'ts', 'n'], ['o1']],
    ['values alone', ['t', 'd', 'ts', 'n', 'f', 'i', 'b'], []],
    ['objects alone', [], ['o2', 'o1']],
  ];
  it.each(shapes)('%s: equals the hash stored rows hold, row by row', async (_, values, objects) => {
    const dialect = target.name === 'duckdb' ? duckdbDialect : postgresDialect;
    const rows = await destination.withConnection((conn) =>
      conn.all<{ id: number; now: string; stored: string }>(
        `SELECT id, ${dialect.contentHash(values, objects)} AS now, ${STORED_HASH[target.name](values, objects)} AS stored FROM awkward ORDER BY id`,
      ),
    );
    expect(rows).toHaveLength(ROWS.length);
    for (const row of rows) expect({ id: row.id, hash: row.now }).toEqual({ id: row.id, hash: row.stored });
    // distinct rows, distinct hashes: the expression reads every column
    expect(new Set(rows.map((r) => r.now)).size).toBe(ROWS.length);
  });
});
