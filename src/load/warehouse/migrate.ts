import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { quoteIdent } from './identifiers.js';
import type { SqlConnection } from './sql-connection.js';

/**
 * Folder of the DDL files: `sql/` at the package root, the nearest above this module, so that it is found wherever
 * the build put the module (`src/load/warehouse`, `dist/load/warehouse`, or one bundled file).
 */
export const SQL_DIR = sqlDirAbove(fileURLToPath(import.meta.url));

function sqlDirAbove(file: string): string {
  for (let dir = dirname(file); ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'sql', 'duckdb'))) return join(dir, 'sql') + sep;
    if (dirname(dir) === dir) throw new Error(`no sql/duckdb folder above ${file}: the package is incomplete`);
  }
}

/**
 * Applies `sql/<dialect>/NNN_*.sql` files not yet recorded in `_etl_migrations`, in order, each in its own
 * transaction together with its record. The caller has made `schema` the connection's default schema.
 */
export async function migrate(
  conn: SqlConnection,
  dialect: 'duckdb' | 'postgres',
  schema: string,
  now: string,
): Promise<string[]> {
  const table = `${quoteIdent(schema)}."_etl_migrations"`;
  await conn.run(`CREATE TABLE IF NOT EXISTS ${table} (version VARCHAR PRIMARY KEY, applied_at TIMESTAMPTZ NOT NULL)`);
  const applied = new Set((await conn.all<{ version: string }>(`SELECT version FROM ${table}`)).map((r) => r.version));
  const dir = `${SQL_DIR}${dialect}/`;
  const files = readdirSync(dir)
    .filter((f) => /^\d+_.*\.sql$/.test(f))
    .sort();
  const done: string[] = [];
  for (const file of files) {
    const version = file.replace(/\.sql$/, '');
    if (applied.has(version)) continue;
    const text = readFileSync(dir + file, 'utf8');
    await conn.transaction(async () => {
      for (const statement of splitStatements(text)) await conn.run(statement);
      await conn.run(`INSERT INTO ${table} (version, applied_at) VALUES ($1, CAST($2 AS TIMESTAMPTZ))`, [version, now]);
    });
    done.push(version);
  }
  return done;
}

/** Splits a DDL file on `;` at line ends, dropping `--` comments. The DDL files hold no `;` inside strings. */
export function splitStatements(text: string): string[] {
  return text
    .split('\n')
    .filter((line) => !/^\s*--/.test(line))
    .join('\n')
    .split(/;\s*$/m)
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
}
