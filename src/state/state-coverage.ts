import type { SqlConnection } from '../load/warehouse/sql-connection.js';
import { DAY_MS } from '../plan/days.js';

/** How far a state stream's observations cover the customer directory, as `status` and `verify` report it. */
export interface StateCoverage {
  stream: string;
  /** Customers in `accounts`. */
  customers: number;
  /** Of those, customers observed at most `sweepDays` days before `now`. */
  observedWithin: number;
  /** Of those, customers never observed by the stream. */
  neverObserved: number;
  /** The oldest last observation of a customer in `accounts` (ISO UTC), or null when none was observed. */
  oldestObservedAt: string | null;
  /** Days between the oldest observation and `now`, one decimal; null when none. */
  oldestAgeDays: number | null;
  /** The customer waiting longest (never observed, or observed longest ago) when some is outside the period. */
  firstStale: string | null;
  /** Customers the latest run that observed any asked, and that run. */
  askedByLastRun: number;
  lastRunId: string | null;
  sweepDays: number;
}

/**
 * Reads a state stream's coverage of the customer directory: customers observed within the sweep period, never
 * observed, the oldest observation, and how many customers the latest run asked. Observations record what was
 * asked and when; they say nothing of what changed at the source since.
 */
export async function stateCoverage(
  conn: SqlConnection,
  stream: string,
  sweepDays: number,
  now: Date,
): Promise<StateCoverage> {
  const s = conn.schemaSql;
  const since = new Date(now.getTime() - sweepDays * DAY_MS).toISOString();
  const observed = `LEFT JOIN ${s}._etl_customer_observations o ON o.stream = $1 AND o.customer_id = a.customer_id`;
  const [counts] = await conn.all<{
    customers: number | string;
    within: number | string | null;
    never: number | string | null;
    oldest: number | string | null;
  }>(
    `SELECT COUNT(*) AS customers,
            SUM(CASE WHEN o.observed_at >= CAST($2 AS TIMESTAMPTZ) THEN 1 ELSE 0 END) AS within,
            SUM(CASE WHEN o.observed_at IS NULL THEN 1 ELSE 0 END) AS never,
            MIN(EXTRACT(EPOCH FROM o.observed_at) * 1000) AS oldest
       FROM ${s}.accounts a ${observed}`,
    [stream, since],
  );
  const [stale] = await conn.all<{ customer_id: string }>(
    `SELECT a.customer_id FROM ${s}.accounts a ${observed}
      WHERE o.observed_at IS NULL OR o.observed_at < CAST($2 AS TIMESTAMPTZ)
      ORDER BY o.observed_at NULLS FIRST, a.customer_id LIMIT 1`,
    [stream, since],
  );
  const [last] = await conn.all<{ run_id: string; n: number | string }>(
    `SELECT _run_id AS run_id, COUNT(*) AS n FROM ${s}._etl_customer_observations
      WHERE stream = $1 AND _run_id = (SELECT _run_id FROM ${s}._etl_customer_observations WHERE stream = $1 ORDER BY _loaded_at DESC LIMIT 1)
      GROUP BY _run_id`,
    [stream],
  );
  const oldestMs = counts?.oldest === null || counts?.oldest === undefined ? null : Math.round(Number(counts.oldest));
  return {
    stream,
    customers: Number(counts?.customers ?? 0),
    observedWithin: Number(counts?.within ?? 0),
    neverObserved: Number(counts?.never ?? 0),
    oldestObservedAt: oldestMs === null ? null : new Date(oldestMs).toISOString(),
    oldestAgeDays: oldestMs === null ? null : Math.round(((now.getTime() - oldestMs) / DAY_MS) * 10) / 10,
    firstStale: stale?.customer_id ?? null,
    askedByLastRun: Number(last?.n ?? 0),
    lastRunId: last?.run_id ?? null,
    sweepDays,
  };
}

/** The first observation by `stream` still held (ISO UTC), or null: when its sweep's first period began. */
export async function firstObservation(conn: SqlConnection, stream: string): Promise<string | null> {
  const [row] = await conn.all<{ ms: number | string | null }>(
    `SELECT MIN(EXTRACT(EPOCH FROM observed_at) * 1000) AS ms FROM ${conn.schemaSql}._etl_customer_observations WHERE stream = $1`,
    [stream],
  );
  return row?.ms === null || row?.ms === undefined ? null : new Date(Math.round(Number(row.ms))).toISOString();
}

/**
 * When the first period of a sweep that took over a first night (`first_night: sweep`) ends: `sweepDays` days after
 * the stream's first observation; null once it has ended, or before anything was observed.
 */
export async function firstPeriodEnd(
  conn: SqlConnection,
  stream: string,
  sweepDays: number,
  now: Date,
): Promise<string | null> {
  const first = await firstObservation(conn, stream);
  if (first === null) return null;
  const ends = Date.parse(first) + sweepDays * DAY_MS;
  return ends > now.getTime() ? new Date(ends).toISOString() : null;
}

/** The one line `status` and `verify` print for a state stream's coverage. */
export function coverageLine(c: StateCoverage): string {
  const oldest =
    c.oldestObservedAt === null
      ? 'none observed yet'
      : `oldest observation ${c.oldestObservedAt.slice(0, 19)} (${c.oldestAgeDays} day(s) ago)`;
  const never = c.neverObserved > 0 ? `, ${c.neverObserved} never observed` : '';
  return `${c.stream}: ${c.askedByLastRun} customers asked by the last run; ${c.observedWithin} of ${c.customers} customers observed within the last ${c.sweepDays} day(s)${never}; ${oldest}`;
}
