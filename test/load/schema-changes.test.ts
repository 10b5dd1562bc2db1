import { describe, expect, it } from 'vitest';
import { SchemaChangeLog } from '../../src/load/derived/schema-contract.js';
import { testDestinations } from '../helpers/destinations.js';
import { withWarehouse } from '../helpers/warehouse-reader.js';

describe.each(testDestinations)(
  'the record of what a commit changed of the schema analysts read, on $name',
  (target) => {
    it('records a view and a column added, a column retyped and retired, a view retired, with the notes given', async () => {
      const { config } = await target.fresh();
      const text = target.name === 'duckdb' ? 'VARCHAR' : 'text';
      await withWarehouse(config, async (conn) => {
        await conn.run(`CREATE TABLE board (a ${text}, b INTEGER, c ${text})`);
        await conn.run(`CREATE VIEW old_board AS SELECT a FROM board`);
        await conn.run(`CREATE TABLE _etl_own (x INTEGER)`);
        await conn.transaction(async () => {
          const changes = await SchemaChangeLog.begin(conn, config.schema!, 'evolve');
          expect(changes.publishedType('board', 'b')).toBe('integer');
          expect(changes.publishedType('_etl_own', 'x')).toBeUndefined();
          await conn.run('DROP VIEW old_board');
          await conn.run('ALTER TABLE board DROP COLUMN c');
          await conn.run('ALTER TABLE board ADD COLUMN d DATE');
          await conn.run(`ALTER TABLE board ALTER COLUMN b TYPE ${text}`);
          await conn.run(`CREATE VIEW new_board AS SELECT a, d FROM board`);
          await conn.run(`ALTER TABLE _etl_own ADD COLUMN y INTEGER`);
          changes.note('board', 'd', { sourceKey: 'D', reason: 'a new key "D"' });
          await changes.valuesRead('board', 'a', 'integer', 'text', {
            sourceKey: 'A',
            reason: 'words now',
            count: () => Promise.resolve(3),
          });
          await changes.finish(conn, config.schema!, { runId: 'r1', now: '2026-11-29T03:00:00Z' });
        });
        const rows = await conn.all<Record<string, unknown>>(
          `SELECT object_name, column_name, change, from_type, to_type, source_key, value_count FROM _etl_schema_changes ORDER BY object_name, column_name, change`,
        );
        expect(
          rows.map((r) =>
            Object.values(r)
              .map((v) => (v === null ? '' : String(v)))
              .join(' | '),
          ),
        ).toEqual([
          'board | a | values_no_longer_fit | integer | text | A | 3',
          'board | b | column_retyped | integer | text |  | ',
          'board | c | column_retired | text |  |  | ',
          'board | d | column_added |  | date | D | ',
          'new_board |  | view_added |  |  |  | ',
          'old_board |  | view_retired |  |  |  | ',
        ]);
      });
    });

    it('says values that no longer fit once, when they stop fitting and when they fit again; freeze refuses them', async () => {
      const { config } = await target.fresh();
      await withWarehouse(config, async (conn) => {
        const read = async (evidence: string, contract: 'evolve' | 'freeze' = 'evolve') =>
          conn.transaction(async () => {
            const changes = await SchemaChangeLog.begin(conn, config.schema!, contract);
            await changes.valuesRead('v', 'q', 'date', evidence, {
              sourceKey: 'q',
              reason: 'r',
              count: () => Promise.resolve(1),
            });
            await changes.finish(conn, config.schema!, { runId: 'r', now: new Date().toISOString() });
          });
        await read('date');
        await read('text');
        await read('text');
        await read('integer');
        await read('date');
        await expect(read('text', 'freeze')).rejects.toThrow(
          'schema contract freeze: 1 value(s) of v.q (date) now read as text',
        );
        const rows = await conn.all<{ change: string; to_type: string }>(
          `SELECT change, to_type FROM _etl_schema_changes ORDER BY changed_at`,
        );
        expect(rows.map((r) => `${r.change} ${r.to_type}`)).toEqual([
          'values_no_longer_fit text',
          'values_no_longer_fit integer',
          'values_fit_again date',
        ]);
      });
    });
  },
);
