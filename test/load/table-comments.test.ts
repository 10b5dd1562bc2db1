import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Destination } from '../../src/load/destination.js';
import { openDestination } from '../../src/load/warehouses.js';
import { describeRelations } from '../../src/load/catalog/table-comments.js';
import { duckdbDialect, postgresDialect } from '../../src/load/warehouse/warehouse-dialect.js';
import { testDestinations } from '../helpers/destinations.js';

describe.each(testDestinations)('comments on every table and column of $name', (target) => {
  let destination: Destination;
  let schema: string;
  beforeAll(async () => {
    const { config } = await target.empty();
    schema = config.schema ?? (target.name === 'duckdb' ? 'main' : 'public');
    destination = await openDestination(config);
  });
  afterAll(async () => destination?.close());

  it('a fresh warehouse has a comment on every table, view and column, equal to its description', async () => {
    await destination.withConnection(async (conn) => {
      const relations = await describeRelations(
        conn,
        target.name === 'duckdb' ? duckdbDialect : postgresDialect,
        schema,
      );
      expect(relations.length).toBeGreaterThan(40);
      const missing: string[] = [];
      for (const r of relations) {
        if (!r.current.table) missing.push(r.name);
        for (const c of r.columns) if (!r.current.columns.get(c.name)) missing.push(`${r.name}.${c.name}`);
        expect(r.current.table).toBe(r.description ?? null);
      }
      expect(missing).toEqual([]);
    });
  });
});
