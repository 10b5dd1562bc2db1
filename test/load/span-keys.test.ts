import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { byKeyRepetition, SpanKeys } from '../../src/load/staging/span-keys.js';
import { duckdbDialect } from '../../src/load/warehouse/warehouse-dialect.js';
import type { TableSpec } from '../../src/load/table-spec.js';

const table: TableSpec = {
  name: 't',
  key: ['a', 'b'],
  columns: [
    { name: 'a', type: 'text' },
    { name: 'b', type: 'text' },
  ],
  merge: { kind: 'upsert' },
};

describe('the keys a span staged', () => {
  it('lists every row whose key was staged more than once, and only those keys', () => {
    // few distinct values, so that keys repeat
    const value = fc.oneof(fc.constantFrom('x', 'y', 'x\u0000y', ''), fc.string({ maxLength: 3 }));
    fc.assert(
      fc.property(
        fc.array(fc.tuple(value, value), { maxLength: 60 }),
        fc.integer({ min: 1, max: 7 }),
        (keys, batch) => {
          const span = new SpanKeys([table]);
          const rows = keys.map(([a, b], i) => ({ seq: i + 1, row: { a, b } }));
          for (let i = 0; i < rows.length; i += batch) span.add('t', rows.slice(i, i + batch));
          const count = new Map<string, number>();
          for (const [a, b] of keys) count.set(JSON.stringify([a, b]), (count.get(JSON.stringify([a, b])) ?? 0) + 1);
          const repeated = rows.filter((r) => count.get(JSON.stringify([r.row.a, r.row.b]))! > 1).map((r) => r.seq);
          const listed = [...span.listed()].map(([name, seq]) => (expect(name).toBe('t'), seq));
          // 53-bit hashes of a few dozen keys: a collision here would be a broken hash, not bad luck
          expect(listed.sort((x, y) => x - y)).toEqual(repeated);
          expect(span.states().get('t')).toBe(repeated.length === 0 ? 'unique' : 'listed');
        },
      ),
    );
  });

  it('keeps track of tens of thousands of keys, however its table grows', () => {
    const span = new SpanKeys([table]);
    // 15,000 distinct keys, then the first 5,000 of them again
    const rows = Array.from({ length: 20_000 }, (_, i) => ({
      seq: i + 1,
      row: { a: `k${i % 15_000}`, b: i % 15_000 === 7 ? null : 'v' },
    }));
    for (let i = 0; i < rows.length; i += 999) span.add('t', rows.slice(i, i + 999));
    const listed = [...span.listed()].map(([, seq]) => seq).sort((x, y) => x - y);
    expect(listed).toEqual(rows.filter((_, i) => i % 15_000 < 5_000).map((r) => r.seq));
  });

  it('knows nothing once staged rows were dropped, so the merge numbers them all', () => {
    const span = new SpanKeys([table]);
    span.add('t', [{ seq: 1, row: { a: 'x', b: 'y' } }]);
    span.forget();
    span.add('t', [{ seq: 2, row: { a: 'x', b: 'y' } }]);
    expect(span.states().has('t')).toBe(false);
    expect([...span.listed()]).toEqual([]);
  });

  describe("a table staged with another's rows knows its keys from its parent's", () => {
    const parent: TableSpec = {
      name: 'responses',
      key: ['response_id'],
      columns: [{ name: 'response_id', type: 'text' }],
      merge: { kind: 'replace-window' },
      stagingOnly: [{ name: '_answers', type: 'json' }],
    };
    const entries: TableSpec = {
      name: 'answers',
      key: ['response_id', 'question_code'],
      columns: [
        { name: 'response_id', type: 'text' },
        { name: 'question_code', type: 'text' },
        { name: 'answer', type: 'text' },
      ],
      merge: { kind: 'replace-window' },
      stagedWith: {
        table: 'responses',
        kind: 'entries',
        column: '_answers',
        nameColumn: 'question_code',
        valueColumn: 'answer',
      },
    };
    const rows: TableSpec = {
      ...entries,
      name: 'answer_rows',
      stagedWith: { table: 'responses', kind: 'rows', column: '_answers' },
    };
    const tables = [parent, entries, rows];
    const split = (spec: TableSpec, state?: 'unique' | 'listed') =>
      byKeyRepetition(
        duckdbDialect,
        spec,
        tables,
        new Map(state ? [['responses', state]] : []),
        'ROWS',
        (where) => `ONCE${where}`,
        (from) => `REPEATED ${from}`,
      );

    it("numbers none of an object's entries when every parent row's key came once", () => {
      // an object's entries have distinct names, so (response_id, question_code) came once too: no window over them all
      expect(split(entries, 'unique')).toBe('ONCE');
    });

    it('numbers only the entries of the parent rows listed as repeated', () => {
      const sql = split(entries, 'listed');
      expect(sql).toContain(`d."table" = 'responses'`);
      expect(sql).toMatch(/^ONCE WHERE .*UNION ALL REPEATED \(SELECT \* FROM ROWS st WHERE st\."_seq" IN /);
    });

    it('numbers every row when nothing proves its keys came once', () => {
      // rows built from an array may repeat a key within one parent row; an unknown parent proves nothing
      expect(split(rows, 'unique')).toBe('REPEATED ROWS');
      expect(split(entries)).toBe('REPEATED ROWS');
      const unnamed: TableSpec = { ...entries, name: 'by_response', key: ['response_id'] };
      expect(split(unnamed, 'unique')).toBe('REPEATED ROWS');
    });
  });
});
