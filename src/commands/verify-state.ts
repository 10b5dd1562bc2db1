import type { StreamName } from '../plan/job-plan.js';
import type { Destination } from '../load/destination.js';
import { quoteIdent } from '../load/warehouse/identifiers.js';
import { firstPeriodEnd, stateCoverage, type StateCoverage } from '../state/state-coverage.js';
import { streamDefinition } from '../streams/registry.js';

/** The streams of what the service knows about each customer today. */
export const STATE_STREAMS: readonly StreamName[] = ['loyalty_status', 'vouchers'];

/** What `verify` can say of a state stream: its coverage of the customer directory and its tables' rows. */
export interface StateCheck {
  coverage: StateCoverage;
  /** Rows of each of the stream's tables. */
  rows: Array<{ table: string; rows: number }>;
  /** Null when every customer in `accounts` was observed within the sweep period; otherwise what is wrong. */
  gap: string | null;
  /** While the first period of a `first_night: sweep` job runs: when it ends (ISO UTC). */
  firstPeriodEnds: string | null;
}

/**
 * Checks a state stream in the warehouse alone: every customer in `accounts` must have been observed within the
 * last `sweep_days` days (what the sweep promises), and counts the rows of its tables. What it cannot prove: the
 * rows are the state as of each customer's last observation, and the service's state moves on (points expire,
 * vouchers come and go) between that observation and the verify.
 */
export async function checkStateStream(
  destination: Destination,
  stream: StreamName,
  sweepDays: number,
  now: Date,
  firstNightSweep = false,
): Promise<StateCheck> {
  return destination.withConnection(async (conn) => {
    const coverage = await stateCoverage(conn, stream, sweepDays, now);
    const firstPeriodEnds = firstNightSweep ? await firstPeriodEnd(conn, stream, sweepDays, now) : null;
    const rows: StateCheck['rows'] = [];
    for (const t of streamDefinition(stream).tables) {
      const [row] = await conn.all<{ n: number | string }>(
        `SELECT COUNT(*) AS n FROM ${conn.schemaSql}.${quoteIdent(t.name)}`,
      );
      rows.push({ table: t.name, rows: Number(row?.n ?? 0) });
    }
    // a first night left to the sweep: customers never asked are still in their first period
    const stale =
      coverage.customers - coverage.observedWithin - (firstPeriodEnds !== null ? coverage.neverObserved : 0);
    const gap =
      stale === 0
        ? null
        : `${stale} customer(s) not observed within the last ${sweepDays} day(s); first: ${coverage.firstStale} (the next runs' sweep asks the oldest first)`;
    return { coverage, rows, gap, firstPeriodEnds };
  });
}

/** The human form of a state stream's check, with what it cannot prove. */
export function stateCheckLines(check: StateCheck): string[] {
  const c = check.coverage;
  const oldest =
    c.oldestObservedAt === null
      ? 'none observed yet'
      : `oldest observation ${c.oldestObservedAt.slice(0, 19)} (${c.oldestAgeDays} day(s) ago)`;
  return [
    `${c.stream}: ${c.observedWithin} of ${c.customers} customers observed within the last ${c.sweepDays} day(s) (sweep_days); ${oldest}`,
    `${c.stream}: ${check.rows.map((r) => `${r.table} ${r.rows} rows`).join(', ')}`,
    `${c.stream}: the rows are each customer's state as of its last observation; what changed at the source since (expiries, vouchers) cannot be proven here`,
    ...(check.firstPeriodEnds !== null && c.neverObserved > 0
      ? [
          `${c.stream}: ${c.neverObserved} customer(s) never asked yet, accepted: first_night: sweep leaves them to the sweep until ${check.firstPeriodEnds.slice(0, 19)}Z`,
        ]
      : []),
  ];
}
