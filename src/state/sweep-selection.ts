import type { SqlConnection } from '../load/warehouse/sql-connection.js';
import { DAY_MS } from '../plan/days.js';
import type { Window } from '../plan/windows.js';
import type { CustomerSelection, WarehouseRead } from './selected-customers.js';
import { lastEventSeq, readEventBookmark } from './event-bookmark.js';
import { pagedSelection } from './paged-selection.js';

/**
 * The customers a state stream (loyalty_status, vouchers) asks for `span`, streamed in key order, each once:
 *
 * - **signs of change** in the span: an account the export listed in one of its windows (`_etl_account_windows`),
 *   a posting dated in it (`loyalty_postings`, loaded earlier in the same run), or a loyalty webhook event
 *   received since the stream's event bookmark;
 * - **the sweep**: the `ceil(customers / sweepDays)` customers whose last observation by this stream
 *   (`_etl_customer_observations`) is oldest, never-observed ones first, ties by `customer_id`;
 * - **catch-up**: every customer last observed more than `sweepDays − ½` days ago.
 *
 * Oldest-first rather than a hash bucket per night, because it needs no calendar: whatever nights were skipped
 * or failed, each night takes the customers that waited longest, and the catch-up takes every customer that
 * waited a whole period. So every customer is asked at least once in any `sweepDays` consecutive nights: a
 * customer not taken on a night had at least a night's quota of customers older than itself, who are all
 * observed that night and so become younger; customers added later come with an account change (a sign), are
 * observed on their first night and never get in front. The quota grows with the directory, so the sweep keeps
 * its period as the program grows.
 */
export async function signsAndSweepCustomers(
  read: WarehouseRead,
  job: string,
  stream: string,
  sweepDays: number,
  span: Window[],
  now: Date,
  signs = true,
  sweep = true,
): Promise<CustomerSelection> {
  const { after, through } = await read(async (conn) => ({
    after: (await readEventBookmark(conn, job, stream)) ?? 0,
    through: await lastEventSeq(conn),
  }));
  // no sweep: no quota, and no observation is stale before the epoch
  const order = sweep
    ? await sweepOrder(read, stream, sweepDays, now)
    : { lastDue: null, staleBefore: new Date(0).toISOString() };
  const range = { start: span[0]!.start, end: span.at(-1)!.end };
  return {
    kind: 'signs-and-sweep',
    ...selected(read, stream, order, range, after, through, signs),
    events: { after, through },
  };
}

/**
 * Where a night's sweep of `stream` ends: its quota (`ceil(customers / sweepDays)`) in the sweep's order, found once
 * per span, and the instant before which a last observation is stale (catch-up). The postings sweep of the cheap
 * selections uses the same order, on the postings' own observations.
 */
export async function sweepOrder(
  read: WarehouseRead,
  stream: string,
  sweepDays: number,
  now: Date,
): Promise<SweepOrder> {
  const total = await read(async (conn) => {
    const [row] = await conn.all<{ n: number | string }>(`SELECT COUNT(*) AS n FROM ${conn.schemaSql}.accounts`);
    return Number(row?.n ?? 0);
  });
  const quota = Math.ceil(total / sweepDays);
  const lastDue = quota === 0 ? null : await read((conn) => lastDueCustomer(conn, stream, quota));
  return { lastDue, staleBefore: new Date(now.getTime() - (sweepDays - 0.5) * DAY_MS).toISOString() };
}

/** A span's sweep: where its quota ends, and when a last observation is stale. */
export interface SweepOrder {
  lastDue: LastDue;
  staleBefore: string;
}

/**
 * The SQL of a sweep over `accounts a`: `joins` (the customer's last observation `o` by the stream, and the last
 * due customer's `t`) and `swept`, true for a customer the sweep takes (within the quota, or stale). `p` names the
 * placeholders of the stream, of the last due customer's id and of the stale instant.
 */
export function sweepTerms(
  s: string,
  order: SweepOrder,
  p: { stream: string; lastDueId: string; staleBefore: string },
): { joins: string; swept: string } {
  const { lastDue } = order;
  // In the sweep's order: before the last due customer, or that customer itself (observations move only in the
  // span's commit, so every page sees the same order).
  const due =
    lastDue === null
      ? 'FALSE'
      : 'all' in lastDue
        ? 'TRUE'
        : `(CASE WHEN t.at IS NULL THEN o.observed_at IS NULL AND a.customer_id <= ${p.lastDueId}
                 ELSE o.observed_at IS NULL OR o.observed_at < t.at OR (o.observed_at = t.at AND a.customer_id <= ${p.lastDueId}) END)`;
  return {
    joins: `LEFT JOIN ${s}._etl_customer_observations o ON o.stream = ${p.stream} AND o.customer_id = a.customer_id
            LEFT JOIN (SELECT observed_at AS at FROM ${s}._etl_customer_observations WHERE stream = ${p.stream} AND customer_id = ${p.lastDueId}) t ON TRUE`,
    swept: `(${due} OR o.observed_at < CAST(${p.staleBefore} AS TIMESTAMPTZ))`,
  };
}

/** The id that {@link sweepTerms} compares with: the last due customer's, or '' when the quota holds none or all. */
export function lastDueId(order: SweepOrder): string {
  return order.lastDue !== null && 'id' in order.lastDue ? order.lastDue.id : '';
}

/**
 * The last customer of the sweep's quota in its order (never observed first, then oldest observation, then
 * `customer_id`), found once per span: each page of the selection then compares with it instead of sorting the
 * whole directory again. `{ all: true }` when the quota covers every customer.
 */
async function lastDueCustomer(conn: SqlConnection, stream: string, quota: number): Promise<LastDue> {
  const s = conn.schemaSql;
  const [row] = await conn.all<{ customer_id: string }>(
    `SELECT a.customer_id FROM ${s}.accounts a LEFT JOIN ${s}._etl_customer_observations o ON o.stream = $1 AND o.customer_id = a.customer_id
      ORDER BY o.observed_at NULLS FIRST, a.customer_id LIMIT 1 OFFSET ${quota - 1}`,
    [stream],
  );
  return row ? { id: row.customer_id } : { all: true };
}

/** Where the sweep's quota ends; null when there is no customer to sweep. */
type LastDue = { id: string } | { all: true } | null;

function selected(
  read: WarehouseRead,
  stream: string,
  order: SweepOrder,
  range: { start: string; end: string },
  eventsAfter: number,
  eventsThrough: number,
  signs: boolean,
): Pick<CustomerSelection, 'customers' | 'count'> {
  return pagedSelection(read, (conn, last) => {
    const s = conn.schemaSql;
    const { joins, swept } = sweepTerms(s, order, { stream: '$1', lastDueId: '$8', staleBefore: '$3' });
    // a first night left to the sweep (`first_night: sweep`): every customer is new, so no sign counts (the terms
    // stay in the query, so that PostgreSQL still types their parameters)
    const signed = signs ? 'TRUE' : 'FALSE';
    return {
      from: `FROM (SELECT a.customer_id, a.phone, a.email FROM ${s}.accounts a ${joins}
        WHERE a.customer_id > $2 AND (
              ${swept}
           OR (${signed} AND (
              EXISTS (SELECT 1 FROM ${s}._etl_account_windows w WHERE w.customer_id = a.customer_id AND w._window_start BETWEEN CAST($4 AS DATE) AND CAST($5 AS DATE))
           OR EXISTS (SELECT 1 FROM ${s}.loyalty_postings p WHERE p.customer_id = a.customer_id AND p._window_start BETWEEN CAST($4 AS DATE) AND CAST($5 AS DATE))
           OR EXISTS (SELECT 1 FROM ${s}.loyalty_events e WHERE e.customer_id = a.customer_id AND e.seq > $6 AND e.seq <= $7))))) sel`,
      params: [stream, last, order.staleBefore, range.start, range.end, eventsAfter, eventsThrough, lastDueId(order)],
    };
  });
}
