import { afterEach, describe, expect, it } from 'vitest';
import type { Destination } from '../../src/load/destination.js';
import { openDestination } from '../../src/load/warehouses.js';
import type { SqlConnection } from '../../src/load/warehouse/sql-connection.js';
import { accountsStream } from '../../src/streams/accounts.js';
import { testDestinations } from '../helpers/destinations.js';
import { loadRecords, offlineContext } from '../helpers/offline-api.js';

const OPTIONS = [
  { key: 'wine', value: 'Wine' },
  { key: 'arts', value: 'Arts' },
  { key: 'crafts', value: 'Crafts' },
  { key: 'arts;crafts', value: 'Arts; crafts' },
];
const TIERS = [
  { key: 'gold', value: 'Gold' },
  { key: 'silver', value: 'Silver' },
];

/** A `profile_fields` row as the profile refresh writes it, with only what reading values needs. */
async function defineField(
  conn: SqlConnection,
  json: string,
  fieldId: number,
  name: string,
  multiple: boolean,
  options: unknown,
) {
  await conn.run(
    `INSERT INTO profile_fields (profile_id, field_id, name, multiple, options, definition, _run_id, _loaded_at)
     VALUES (1, $1, $2, $3, CAST($4 AS ${json}), CAST('{}' AS ${json}), 'r0', CAST('2024-01-01T00:00:00Z' AS TIMESTAMPTZ))`,
    [fieldId, name, multiple, JSON.stringify(options)],
  );
}

describe.each(testDestinations)('custom fields and their options, $name', (target) => {
  let destination: Destination | undefined;
  afterEach(async () => {
    await destination?.close();
    destination = undefined;
  });

  it('a warehouse made before gets position 1 and no label on its rows; loads then split multiple-choice values into rows with labels', async () => {
    const { config } = await target.fresh();
    destination = await openDestination(config);
    // the table as it was before 013: keyed by customer and field, no position, no label
    await destination.withConnection(async (conn) => {
      if (target.name === 'postgres') {
        await conn.run('ALTER TABLE account_custom_fields DROP CONSTRAINT account_custom_fields_pkey');
        await conn.run('ALTER TABLE account_custom_fields DROP COLUMN position, DROP COLUMN label');
        await conn.run('ALTER TABLE account_custom_fields ADD PRIMARY KEY (customer_id, field_name)');
      } else {
        await conn.run('ALTER TABLE account_custom_fields DROP COLUMN label');
        await conn.run('ALTER TABLE account_custom_fields DROP COLUMN position');
      }
      await conn.run(
        `INSERT INTO account_custom_fields (customer_id, field_name, value, _window_start, _run_id, _loaded_at)
         VALUES ('C0', 'Interests', 'wine,arts', CAST('2024-03-01' AS DATE), 'r0', CAST('2024-03-01T00:00:00Z' AS TIMESTAMPTZ)),
                ('C0', 'tier', 'gold', CAST('2024-03-01' AS DATE), 'r0', CAST('2024-03-01T00:00:00Z' AS TIMESTAMPTZ))`,
      );
      await conn.run(`DELETE FROM _etl_migrations WHERE version = '013_custom_field_options'`);
    });
    await destination.close();
    destination = await openDestination(config);
    await destination.withConnection(async (conn) => {
      expect(
        await conn.all('SELECT field_name, position, value, label FROM account_custom_fields ORDER BY field_name'),
      ).toEqual([
        { field_name: 'Interests', position: 1, value: 'wine,arts', label: null },
        { field_name: 'tier', position: 1, value: 'gold', label: null },
      ]);
      if (target.name === 'postgres') {
        const key = await conn.all<{ column_name: string }>(
          `SELECT a.attname AS column_name FROM pg_index i JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY(i.indkey)
            WHERE i.indrelid = 'account_custom_fields'::regclass AND i.indisprimary ORDER BY a.attnum`,
        );
        expect(key.map((k) => k.column_name).sort()).toEqual(['customer_id', 'field_name', 'position']);
      }
      const json = target.name === 'postgres' ? 'jsonb' : 'JSON';
      await defineField(conn, json, 1, 'Interests', true, OPTIONS);
      await defineField(conn, json, 2, 'tier', false, TIERS);
    });

    const ctx = offlineContext({ job: 'j', firstDay: '2024-03-01', timezone: 'UTC' });
    const account = (id: string, fields: Record<string, string | null>, day: string) => ({
      customerId: id,
      profileSet: `${day} 10:00:00 UTC`,
      customFieldMap: fields,
    });
    await loadRecords(
      accountsStream,
      { start: '2024-03-02', end: '2024-03-02' },
      [
        account('C0', { Interests: 'Wine, Arts; crafts', tier: 'gold' }, '2024-03-02'),
        account('C1', { Interests: 'arts;crafts', tier: 'Silver' }, '2024-03-02'),
        account('C2', { Interests: '["arts","crafts"]', tier: 'bronze' }, '2024-03-02'),
      ],
      { ...ctx, choiceLists: 'auto' },
      destination,
      'r1',
    );
    const held = (conn: SqlConnection) =>
      conn.all(
        'SELECT customer_id, field_name, position, value, label FROM account_custom_fields ORDER BY customer_id, field_name, position',
      );
    await destination.withConnection(async (conn) => {
      expect(await held(conn)).toEqual([
        // labels joined by ", ", one of them holding ";": read as one list
        { customer_id: 'C0', field_name: 'Interests', position: 1, value: 'wine', label: 'Wine' },
        { customer_id: 'C0', field_name: 'Interests', position: 2, value: 'arts;crafts', label: 'Arts; crafts' },
        { customer_id: 'C0', field_name: 'tier', position: 1, value: 'gold', label: 'Gold' },
        // "arts;crafts" is one option or two: refused, never guessed
        { customer_id: 'C1', field_name: 'Interests', position: 1, value: null, label: null },
        { customer_id: 'C1', field_name: 'tier', position: 1, value: 'Silver', label: 'Silver' },
        { customer_id: 'C2', field_name: 'Interests', position: 1, value: 'arts', label: 'Arts' },
        { customer_id: 'C2', field_name: 'Interests', position: 2, value: 'crafts', label: 'Crafts' },
        { customer_id: 'C2', field_name: 'tier', position: 1, value: 'bronze', label: null },
      ]);
      const [column] = await conn.all<{ column_name: string }>(
        `SELECT column_name FROM _etl_columns WHERE table_name = 'accounts' AND source_key = 'Interests'`,
      );
      expect(
        await conn.all(`SELECT customer_id, "${column!.column_name}" AS v FROM accounts ORDER BY customer_id`),
      ).toEqual([
        { customer_id: 'C0', v: '["wine","arts;crafts"]' },
        { customer_id: 'C1', v: null },
        { customer_id: 'C2', v: '["arts","crafts"]' },
      ]);
      expect(
        await conn.all(`SELECT record_key, field, raw_value FROM _etl_field_rejects WHERE stream = 'accounts'`),
      ).toEqual([{ record_key: 'C1', field: 'customFieldMap.Interests', raw_value: '"arts;crafts"' }]);
    });

    // stated by the jobs file, the separator settles it; and a later value replaces every row of the field
    await loadRecords(
      accountsStream,
      { start: '2024-03-03', end: '2024-03-03' },
      [
        account('C1', { Interests: 'arts;crafts' }, '2024-03-03'),
        account('C2', { Interests: 'wine', tier: 'gold' }, '2024-03-03'),
      ],
      { ...ctx, choiceLists: 'comma' },
      destination,
      'r2',
    );
    await destination.withConnection(async (conn) => {
      expect((await held(conn)).filter((r) => r.customer_id !== 'C0')).toEqual([
        { customer_id: 'C1', field_name: 'Interests', position: 1, value: 'arts;crafts', label: 'Arts; crafts' },
        { customer_id: 'C2', field_name: 'Interests', position: 1, value: 'wine', label: 'Wine' },
        { customer_id: 'C2', field_name: 'tier', position: 1, value: 'gold', label: 'Gold' },
      ]);
    });
  });
});
