import type { SqlConnection } from '../load/warehouse/sql-connection.js';
import { quoteIdent } from '../load/warehouse/identifiers.js';

/** A history table (`accounts_history`, …) as `status` shows it: it grows with changes, not with nights. */
export interface HistoryStatus {
  stream: string;
  table: string;
  /** False where the job turned it off (`jobs.<name>.history`). */
  kept: boolean;
  versions: number;
  /** Keys with a current version: one each. */
  current: number;
  /** Observations the versions are rebuilt from. */
  observations: number;
}

/** Counts the versions and observations of each history table. */
export async function readHistoryStatus(
  conn: SqlConnection,
  histories: ReadonlyArray<{ stream: string; table: string; observations: string; kept: boolean }>,
): Promise<HistoryStatus[]> {
  const out: HistoryStatus[] = [];
  for (const h of histories) {
    const [versions] = await conn.all<{ n: number | string; current: number | string }>(
      `SELECT COUNT(*) AS n, COUNT(*) FILTER (WHERE is_current) AS current FROM ${conn.schemaSql}.${quoteIdent(h.table)}`,
    );
    const [observations] = await conn.all<{ n: number | string }>(
      `SELECT COUNT(*) AS n FROM ${conn.schemaSql}.${quoteIdent(h.observations)}`,
    );
    out.push({
      stream: h.stream,
      table: h.table,
      kept: h.kept,
      versions: Number(versions?.n ?? 0),
      current: Number(versions?.current ?? 0),
      observations: Number(observations?.n ?? 0),
    });
  }
  return out;
}
