import type { SqlConnection } from '../load/warehouse/sql-connection.js';

/** An integration as the warehouse keeps it (`_etl_integrations`): never its secrets. */
export interface IntegrationRow {
  integrationId: number;
  title: string | null;
  shopDomain: string | null;
  clientTitle: string | null;
  /** UTC, ISO 8601. */
  createdAt: string | null;
  lastSeenAt: string;
}

/** Records that the token named this integration now (`check`). */
export async function recordIntegrationSeen(conn: SqlConnection, row: IntegrationRow): Promise<void> {
  await conn.run(
    `INSERT INTO ${conn.schemaSql}._etl_integrations (integration_id, title, shop_domain, client_title, created_at, last_seen_at)
     VALUES ($1, $2, $3, $4, CAST($5 AS TIMESTAMPTZ), CAST($6 AS TIMESTAMPTZ))
     ON CONFLICT (integration_id) DO UPDATE SET title = EXCLUDED.title, shop_domain = EXCLUDED.shop_domain,
       client_title = EXCLUDED.client_title, created_at = EXCLUDED.created_at, last_seen_at = EXCLUDED.last_seen_at`,
    [row.integrationId, row.title, row.shopDomain, row.clientTitle, row.createdAt, row.lastSeenAt],
  );
}

/** The integration last seen, or null when `check` never saw one. */
export async function readLastIntegration(conn: SqlConnection): Promise<IntegrationRow | null> {
  const [row] = await conn.all<{
    integration_id: number | string;
    title: string | null;
    shop_domain: string | null;
    client_title: string | null;
    created_at: string | null;
    last_seen_at: string;
  }>(
    `SELECT integration_id, title, shop_domain, client_title, CAST(created_at AS VARCHAR) AS created_at,
            CAST(last_seen_at AS VARCHAR) AS last_seen_at
       FROM ${conn.schemaSql}._etl_integrations ORDER BY last_seen_at DESC LIMIT 1`,
  );
  return row
    ? {
        integrationId: Number(row.integration_id),
        title: row.title,
        shopDomain: row.shop_domain,
        clientTitle: row.client_title,
        createdAt: row.created_at,
        lastSeenAt: row.last_seen_at,
      }
    : null;
}
