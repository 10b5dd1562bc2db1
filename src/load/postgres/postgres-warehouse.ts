import type { PostgresSettings } from '../../plan/job-plan.js';
import type { Destination } from '../destination.js';
import { postgresExportSource } from './postgres-export-source.js';
import { openWhenFree } from '../open-when-free.js';
import { readyDestination } from '../ready-destination.js';
import { pipelineNote, type WarehouseEntry } from '../warehouse-entry.js';
import { quoteLiteral } from '../warehouse/identifiers.js';
import { QueryError } from '../warehouse/warehouse-errors.js';
import { DEFAULT_LOCK_TIMEOUT_S, PostgresDestination } from './postgres-destination.js';
import { PostgresReader } from './postgres-reader.js';
import { excessPowers, readRolePowers, type RolePowers } from './role-powers.js';

/** PostgreSQL's entry in the registry of warehouses: a server several processes load into, serving its readers. */
export function postgresWarehouse(settings: PostgresSettings): WarehouseEntry {
  const open = async ({ create = true }: { create?: boolean } = {}) =>
    readyDestination(
      await PostgresDestination.open(settings.url, settings.schema, {
        lockTimeoutSeconds: settings.busy_timeout_s ?? DEFAULT_LOCK_TIMEOUT_S,
      }),
      settings.schema,
      { create },
    );
  return {
    name: 'postgres',
    publishesCopy: false,
    missingFile: () => undefined,
    open,
    openWhenFree: (wait) => openWhenFree(() => open(), wait),
    async openReader({ say, pipeline, analystsSchema }) {
      if (pipeline) say(pipelineNote(`schema ${settings.schema}`, false));
      const schema = !pipeline && analystsSchema !== undefined ? analystsSchema : settings.schema;
      const reader = await PostgresReader.open(settings.url, schema);
      if (schema === analystsSchema && !(await hasSchema(reader, schema))) {
        await reader.close();
        throw new QueryError(
          `the analysts' schema ${schema} does not exist yet (a run or backfill makes it); --pipeline reads the pipeline's own`,
        );
      }
      for (const power of reader.excessPowers)
        say(
          `warning: ${power}; statements are read-only transactions, but functions can reach past them: analysts need a read-only role (docs/operations.md, "Roles")`,
        );
      return reader;
    },
    async openExportSource(wait) {
      const warehouse = await openWhenFree(() => open(), wait);
      return { ...postgresExportSource(warehouse), close: () => warehouse.close() };
    },
    checks: async (destination) => roleWarnings(await rolePowersOf(destination)),
    analystsRead: (policy) => ({ schema: policy.schema!, words: `the PostgreSQL schema \`${policy.schema!}\`` }),
  };
}

/** Whether the database has the schema `name`. */
async function hasSchema(reader: PostgresReader, name: string): Promise<boolean> {
  const found = await reader.execute(`SELECT 1 FROM pg_namespace WHERE nspname = ${quoteLiteral(name)}`);
  for await (const rows of found.rows ?? []) if (rows.length > 0) return true;
  return false;
}

function rolePowersOf(destination: Destination): Promise<RolePowers> {
  return destination.withConnection((conn) =>
    readRolePowers((sql, params) => conn.all(sql, params), destination.schema),
  );
}

/**
 * Warnings about the pipeline's PostgreSQL role: powers beyond its schema, which a shared warehouse should not
 * hand out, and that `sql` with this jobs file would give an analyst a role that writes.
 */
function roleWarnings(powers: RolePowers): string[] {
  const lines = excessPowers(powers, false).map(
    (p) =>
      `warning: the warehouse role ${powers.role} ${p}; the pipeline needs only to own its schema (docs/operations.md, "Roles")`,
  );
  if (powers.writes || powers.superuser)
    lines.push(
      `warning: loyalty-etl sql with this jobs file connects as ${powers.role}, which can write: analysts need a read-only role of their own (sql --warehouse postgres://analyst@…; docs/operations.md, "Roles")`,
    );
  return lines;
}
