import { RELEASE } from '../load/warehouse/package-root.js';
import type { SqlConnection } from '../load/warehouse/sql-connection.js';

/** Which releases of loyalty-etl migrated and opened the warehouse, as `status` and the status page show it. */
export interface WarehouseRelease {
  /** The release reading it now. */
  release: string;
  /** The release that opened it last (null: none since releases were recorded). */
  lastOpenedBy: string | null;
  lastOpenedAt: string | null;
  /** The newest migration it holds, and the release that applied it (null before releases were recorded). */
  migration: { version: string; release: string | null; appliedAt: string } | null;
  /** Every release that opened it, the latest first. */
  openedBy: Array<{ version: string; firstOpenedAt: string; lastOpenedAt: string }>;
}

/** Reads `_etl_releases` and `_etl_migrations`. */
export async function readWarehouseRelease(conn: SqlConnection): Promise<WarehouseRelease> {
  const openedBy = await conn.all<{ version: string; firstOpenedAt: string; lastOpenedAt: string }>(
    `SELECT version, CAST(first_opened_at AS VARCHAR) AS "firstOpenedAt", CAST(last_opened_at AS VARCHAR) AS "lastOpenedAt"
       FROM ${conn.schemaSql}._etl_releases ORDER BY last_opened_at DESC, version DESC`,
  );
  const [migration] = await conn.all<{ version: string; release: string | null; appliedAt: string }>(
    `SELECT version, release, CAST(applied_at AS VARCHAR) AS "appliedAt" FROM ${conn.schemaSql}._etl_migrations ORDER BY version DESC LIMIT 1`,
  );
  return {
    release: RELEASE,
    lastOpenedBy: openedBy[0]?.version ?? null,
    lastOpenedAt: openedBy[0]?.lastOpenedAt ?? null,
    migration: migration ?? null,
    openedBy,
  };
}
