import { rename, rm } from 'node:fs/promises';
import { DuckDBInstance } from '@duckdb/node-api';
import type { AnalystsPolicy } from '../../plan/job-plan.js';
import { qualified, quoteIdent } from '../warehouse/identifiers.js';
import { analystValue, isWithheld } from '../derived/personal-data.js';
import { duckdbDialect } from '../warehouse/warehouse-dialect.js';

/** What the DuckDB that rewrites the copy may hold before it spills beside the copy. */
const REWRITE_MEMORY = '64MB';

/**
 * Rewrites the DuckDB file `file` (a copy of the warehouse) as analysts may read it under `policy`: every table's
 * rows again, with phone, e-mail, names and birthdate hashed or NULL (`personal-data.ts`), and the views and macros
 * as they were. Written into a new file rather than updated in place: DuckDB leaves the blocks a rewrite frees in the
 * file, and the clear values with them. Under `hash` a personal column that is not text (birthdate) becomes text.
 */
export async function rewriteForAnalysts(file: string, policy: AnalystsPolicy): Promise<void> {
  if (policy.personalData === 'keep') return;
  if (policy.personalData === 'hash' && !policy.key)
    throw new Error('personal data is to be hashed, but no key was given');
  const raw = `${file}.raw`;
  const spill = `${file}.spill`;
  await rename(file, raw);
  try {
    // the rewrite is one transaction over the whole warehouse: unbounded (DuckDB's default is most of the machine's
    // memory), it held what it wrote until the commit, and a publish took memory in proportion to the warehouse
    const instance = await DuckDBInstance.create(':memory:', {
      memory_limit: REWRITE_MEMORY,
      temp_directory: spill,
      threads: '1',
    });
    try {
      const conn = await instance.connect();
      try {
        await conn.run(`ATTACH ${literal(raw)} AS src (READ_ONLY)`);
        await conn.run(`ATTACH ${literal(file)} AS dst`);
        await conn.run('COPY FROM DATABASE src TO dst (SCHEMA)');
        const columns = (
          await conn.runAndReadAll(
            `SELECT c.schema_name, c.table_name, c.column_name, c.data_type, c.is_nullable FROM duckdb_columns() c
               JOIN duckdb_tables() t ON t.database_name = c.database_name AND t.schema_name = c.schema_name AND t.table_name = c.table_name
              WHERE c.database_name = 'src' ORDER BY c.schema_name, c.table_name, c.column_index`,
          )
        ).getRowObjects() as Array<{
          schema_name: string;
          table_name: string;
          column_name: string;
          data_type: string;
          is_nullable: boolean;
        }>;
        const tables = new Map<string, typeof columns>();
        for (const c of columns)
          tables.set(`${c.schema_name}\u0000${c.table_name}`, [
            ...(tables.get(`${c.schema_name}\u0000${c.table_name}`) ?? []),
            c,
          ]);
        await conn.run('BEGIN');
        for (const list of tables.values()) {
          const { schema_name: schema, table_name: table } = list[0]!;
          const target = `dst.${qualified(schema, table)}`;
          for (const c of list) {
            if (!isWithheld(policy, table, c.column_name)) continue;
            // a withheld column may read NULL where the warehouse's may not (a reject's payload)
            if (!c.is_nullable)
              await conn.run(`ALTER TABLE ${target} ALTER ${quoteIdent(c.column_name)} DROP NOT NULL`);
            if (policy.personalData === 'hash' && c.data_type !== 'VARCHAR' && c.data_type !== 'JSON')
              await conn.run(`ALTER TABLE ${target} ALTER ${quoteIdent(c.column_name)} SET DATA TYPE VARCHAR`);
          }
          const names = list.map((c) => quoteIdent(c.column_name)).join(', ');
          const values = list
            .map((c) =>
              analystValue(duckdbDialect, policy, table, c.column_name, `s.${quoteIdent(c.column_name)}`, '$1'),
            )
            .join(', ');
          const prepared = await conn.prepare(
            `INSERT INTO ${target} (${names}) SELECT ${values} FROM src.${qualified(schema, table)} s`,
          );
          if (values.includes('$1')) prepared.bindVarchar(1, policy.key!);
          await prepared.run();
        }
        await conn.run('COMMIT');
        await conn.run('CHECKPOINT dst');
        await conn.run('DETACH dst');
        await conn.run('DETACH src');
      } finally {
        conn.closeSync();
      }
    } finally {
      instance.closeSync();
    }
  } catch (error) {
    await rm(file, { force: true });
    throw error;
  } finally {
    await rm(raw, { force: true });
    await rm(spill, { recursive: true, force: true });
  }
}

function literal(text: string): string {
  return `'${text.replaceAll("'", "''")}'`;
}
