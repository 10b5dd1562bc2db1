import { readdirSync, readFileSync } from 'node:fs';
import { quoteIdent } from './identifiers.js';
import { isNewerRelease, RELEASE, SQL_DIR } from './package-root.js';
import type { SqlConnection } from './sql-connection.js';
import { WarehouseNewerError } from './warehouse-errors.js';

export { SQL_DIR };

/** A release as `migrate` checks a warehouse against it: this one, unless a test says otherwise. */
export interface ReleaseCheck {
  version: string;
  isNewer: (version: string) => boolean;
}

const THIS_RELEASE: ReleaseCheck = { version: RELEASE, isNewer: (v) => isNewerRelease(v) };

/** The migrations this release knows for `dialect`: `sql/<dialect>/NNN_*.sql`, in the order they apply. */
export function migrationFiles(dialect: 'duckdb' | 'postgres'): Array<{ version: string; path: string }> {
  const dir = `${SQL_DIR}${dialect}/`;
  return readdirSync(dir)
    .filter((f) => /^\d+_.*\.sql$/.test(f))
    .sort()
    .map((f) => ({ version: f.replace(/\.sql$/, ''), path: dir + f }));
}

/** Who opened and migrated a warehouse: what `refuseNewerWarehouse` reads and `status` shows. */
export interface WarehouseReleases {
  /** Every release that opened the warehouse, the latest first (none before releases were recorded). */
  opened: Array<{ version: string; firstOpenedAt: string }>;
  /** Migrations the warehouse holds that this release does not know. */
  unknownMigrations: string[];
}

/**
 * Reads who opened the warehouse in `schema` and what it holds, writing nothing: a warehouse without the tables is
 * new (nothing opened it).
 */
export async function readWarehouseReleases(
  conn: Pick<SqlConnection, 'all'>,
  dialect: 'duckdb' | 'postgres',
  schema: string,
): Promise<WarehouseReleases> {
  const present = new Set(
    (
      await conn.all<{ table_name: string }>(
        `SELECT table_name FROM information_schema.tables WHERE table_schema = $1 AND table_name IN ('_etl_migrations', '_etl_releases')`,
        [schema],
      )
    ).map((r) => r.table_name),
  );
  const known = new Set(migrationFiles(dialect).map((m) => m.version));
  const applied = present.has('_etl_migrations')
    ? (await conn.all<{ version: string }>(`SELECT version FROM ${quoteIdent(schema)}."_etl_migrations"`)).map(
        (r) => r.version,
      )
    : [];
  const opened = present.has('_etl_releases')
    ? await conn.all<{ version: string; firstOpenedAt: string }>(
        `SELECT version, CAST(first_opened_at AS VARCHAR) AS "firstOpenedAt"
           FROM ${quoteIdent(schema)}."_etl_releases" ORDER BY first_opened_at DESC, version DESC`,
      )
    : [];
  return { opened, unknownMigrations: applied.filter((v) => !known.has(v)).sort() };
}

/**
 * Refuses, before anything is written, a warehouse that a newer release of loyalty-etl migrated (it holds a migration
 * this release does not know) or opened: this release would read its tables wrongly and could undo what the newer one
 * wrote. Returns what it read.
 *
 * @throws WarehouseNewerError naming both releases.
 */
export async function refuseNewerWarehouse(
  conn: Pick<SqlConnection, 'all'>,
  dialect: 'duckdb' | 'postgres',
  schema: string,
  where: string,
  { version: release, isNewer }: ReleaseCheck = THIS_RELEASE,
): Promise<WarehouseReleases> {
  const releases = await readWarehouseReleases(conn, dialect, schema);
  const newer = releases.opened.filter((r) => isNewer(r.version)).map((r) => r.version);
  if (newer.length === 0 && releases.unknownMigrations.length === 0) return releases;
  const by = newer.length > 0 ? `loyalty-etl ${newer.join(', ')}` : 'a newer release of loyalty-etl';
  const what =
    releases.unknownMigrations.length > 0
      ? `was migrated by ${by} (${releases.unknownMigrations.join(', ')} unknown to ${release})`
      : `was last written by ${by}`;
  throw new WarehouseNewerError(
    `warehouse ${where} ${what}; this is loyalty-etl ${release}, which leaves it untouched: run ${newer.length > 0 ? newer[0] : 'that release'} or later on it (docs/upgrading.md, "Rolling back")`,
  );
}

/**
 * Applies `sql/<dialect>/NNN_*.sql` files not yet recorded in `_etl_migrations`, in order, each in its own
 * transaction together with its record, after refusing a warehouse of a newer release; then records `release` as
 * one that opened it, the first time it does. The caller has made `schema` the connection's default schema.
 */
export async function migrate(
  conn: SqlConnection,
  dialect: 'duckdb' | 'postgres',
  schema: string,
  now: string,
  where: string,
  release: ReleaseCheck = THIS_RELEASE,
): Promise<string[]> {
  const releases = await refuseNewerWarehouse(conn, dialect, schema, where, release);
  const table = `${quoteIdent(schema)}."_etl_migrations"`;
  await conn.run(`CREATE TABLE IF NOT EXISTS ${table} (version VARCHAR PRIMARY KEY, applied_at TIMESTAMPTZ NOT NULL)`);
  const applied = new Set((await conn.all<{ version: string }>(`SELECT version FROM ${table}`)).map((r) => r.version));
  const done: string[] = [];
  for (const { version, path } of migrationFiles(dialect)) {
    if (applied.has(version)) continue;
    const text = readFileSync(path, 'utf8');
    await conn.transaction(async () => {
      for (const statement of splitStatements(text)) await conn.run(statement);
      await conn.run(`INSERT INTO ${table} (version, applied_at) VALUES ($1, CAST($2 AS TIMESTAMPTZ))`, [version, now]);
    });
    done.push(version);
  }
  // once per release: opening a warehouse to read it must not change it
  if (done.length > 0 || !releases.opened.some((r) => r.version === release.version))
    await conn.transaction(async () => {
      for (const version of done)
        await conn.run(`UPDATE ${table} SET release = $1 WHERE version = $2`, [release.version, version]);
      await conn.run(
        `INSERT INTO ${quoteIdent(schema)}."_etl_releases" (version, first_opened_at) VALUES ($1, CAST($2 AS TIMESTAMPTZ))
         ON CONFLICT (version) DO NOTHING`,
        [release.version, now],
      );
    });
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
