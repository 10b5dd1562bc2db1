import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Destination } from '../../src/load/destination.js';
import { openDestination } from '../../src/load/warehouses.js';
import { accountsStream } from '../../src/streams/accounts.js';
import { testDestinations } from '../helpers/destinations.js';
import { loadRecords, offlineContext } from '../helpers/offline-api.js';

const WINDOW = { start: '2024-03-01', end: '2024-03-01' };

/** Fields whose type only their definition's type code, their options or their values suggest. */
function records(): unknown[] {
  return Array.from({ length: 10 }, (_, i) => ({
    customerId: `C${i}`,
    customFieldMap: {
      // typeId 4 (a date, as the emulator codes it) and no format: its values are words, so it stays text
      coded: `word ${i}`,
      // no definition at all: nine ISO days and one that is none, so a date with one text unparsed
      visited: i === 9 ? 'soon' : `2024-01-0${i + 1}`,
      // a choice field whose option keys are digits: read as its labels, never as numbers
      size: String(i % 3),
      // no definition: numbers with a dot decimal
      spent: `${i}.25`,
    },
  }));
}

describe.each(testDestinations)('custom fields typed from evidence on $name', (target) => {
  let destination: Destination;
  beforeAll(async () => {
    destination = await openDestination((await target.fresh()).config);
    await destination.withConnection(async (conn) => {
      for (const [id, name, typeId, options] of [
        [1, 'coded', 4, null],
        [2, 'size', 3, '[{"key":"0","value":"Small"},{"key":"1","value":"Medium"},{"key":"2","value":"Large"}]'],
      ] as const)
        await conn.run(
          `INSERT INTO profile_fields (profile_id, field_id, name, type_id, options, definition, _run_id, _loaded_at) VALUES (1, $1, $2, $3, CAST($4 AS ${target.name === 'duckdb' ? 'JSON' : 'jsonb'}), CAST('{}' AS ${target.name === 'duckdb' ? 'JSON' : 'jsonb'}), 'r', now())`,
          [id, name, typeId, options],
        );
    });
    const ctx = offlineContext({ job: 'typed', firstDay: WINDOW.start, timezone: 'UTC' });
    await loadRecords(accountsStream, WINDOW, records(), ctx, destination, 'r1');
  });
  afterAll(async () => destination?.close());

  it("no type code types a field; values do where no format says; a choice field's option keys read as their labels", async () => {
    await destination.withConnection(async (conn) => {
      const typed = await conn.all<{ source_key: string; kind: string; format: string | null }>(
        `SELECT source_key, kind, format FROM _etl_typed_columns WHERE table_name = 'accounts' ORDER BY source_key`,
      );
      expect(typed).toEqual([
        { source_key: 'size', kind: 'label', format: '[["0","Small"],["1","Medium"],["2","Large"]]' },
        { source_key: 'spent', kind: 'number', format: null },
        { source_key: 'visited', kind: 'date', format: null },
      ]);
      const labels = await conn.all<{ customer_id: string; cf_size: string; cf_size_label: string }>(
        `SELECT customer_id, cf_size, cf_size_label FROM accounts_typed ORDER BY customer_id LIMIT 3`,
      );
      expect(labels).toEqual([
        { customer_id: 'C0', cf_size: '0', cf_size_label: 'Small' },
        { customer_id: 'C1', cf_size: '1', cf_size_label: 'Medium' },
        { customer_id: 'C2', cf_size: '2', cf_size_label: 'Large' },
      ]);
      const [row] = await conn.all<Record<string, unknown>>(
        `SELECT cf_spent_number * 2 AS twice, CAST(cf_visited_date AS VARCHAR) AS day FROM accounts_typed WHERE customer_id = 'C3'`,
      );
      expect(row).toEqual({ twice: 6.5, day: '2024-01-04' });
      const [unparsed] = await conn.all<{ rows_unparsed: number; example: string }>(
        `SELECT rows_unparsed, example FROM _etl_unparsed_values WHERE source_key = 'visited'`,
      );
      expect([Number(unparsed!.rows_unparsed), unparsed!.example]).toEqual([1, 'soon']);
    });
  });
});
