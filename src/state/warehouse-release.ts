import { RELEASE } from '../load/warehouse/package-root.js';
import type { SqlConnection } from '../load/warehouse/sql-connection.js';

/** Which releases of loyalty-etl migrated and opened the warehouse, as `status` and the status page show it. */
export interface WarehouseRelease {
  /** The release reading it now. */
  release: string;
  /** The newest release that opened it (null: none since releases were recorded), and since when. */
  openedBy: string | null;
  openedSince: string | null;
  /** The newest migration it holds, and the release that applied it (null before releases were recorded). */
  migration: { version: string; release: string | null; appliedAt: string } | null;
  /** Every release that opened it, the latest first. */
  releases: Array<{ version: string; firstOpenedAt: string }>;
}

/** Reads `_etl_releases` and `_etl_migrations`. */
export async function readWarehouseRelease(conn: SqlConnection): Promise<WarehouseRelease> {
  const releases = await conn.all<{ version: string; firstOpenedAt: string }>(
    `SELECT version, CAST(first_opened_at AS VARCHAR) AS "firstOpenedAt"
       FROM ${conn.schemaSql}._etl_releases ORDER BY first_opened_at DESC, version DESC`,
  );
  const [migration] = await conn.all<{ version: string; release: string | null; appliedAt: string }>(
    `SELECT version, release, CAST(applied_at AS VARCHAR) AS "appliedAt" FROM ${conn.schemaSql}._etl_migrations ORDER BY version DESC LIMIT 1`,
  );
  return {
    release: RELEASE,
    openedBy: releases[0]?.version ?? null,
    openedSince: releases[0]?.firstOpenedAt ?? null,
    migration: migration ?? null,
    releases,
  };
}
