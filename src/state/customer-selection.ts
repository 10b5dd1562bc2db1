import type { CustomerRule } from '../plan/customer-rule.js';
import type { Window } from '../plan/windows.js';
import { lastEventSeq, readEventBookmark } from './event-bookmark.js';
import { pagedSelection } from './paged-selection.js';
import type { CustomerSelection, CustomerSelectionKind, WarehouseRead } from './selected-customers.js';
import { signsAndSweepCustomers } from './sweep-selection.js';

export type { CustomerSelection, CustomerSelectionKind, SelectedCustomer, WarehouseRead } from './selected-customers.js';

/**
 * The customers a per-customer stream asks for `span`, streamed from the warehouse in key order; it reads and
 * never writes:
 * - `all`: every customer in `accounts` (the whole directory) the export listed by the span's last day: a
 *   customer the export first listed after it was created after it, so has no posting in the span (a customer
 *   no export window listed is asked all the same);
 * - `changed`: customers whose account was seen in one of the span's windows (`_etl_account_windows`) —
 *   cheaper, and misses postings of customers whose profile did not change in the window;
 * - `webhook`: the customers named by loyalty webhook events received since the stream's bookmark;
 * - `signs-and-sweep`: see {@link signsAndSweepCustomers}.
 */
export async function selectCustomers(
  read: WarehouseRead,
  job: string,
  stream: string,
  rule: CustomerRule | CustomerSelectionKind,
  span: Window[],
  now: Date = new Date(),
): Promise<CustomerSelection> {
  if (typeof rule === 'string') rule = { kind: rule };
  if (rule.kind === 'signs-and-sweep') return signsAndSweepCustomers(read, job, stream, rule.sweepDays, span, now);
  const { kind } = rule;
  if (kind !== 'webhook') return { kind, ...accountCustomers(read, kind, span) };
  const { after, through } = await read(async (conn) => ({ after: await readEventBookmark(conn, job, stream), through: await lastEventSeq(conn) }));
  const customers = after === undefined ? accountCustomers(read, 'all', span) : eventCustomers(read, after, through);
  return { kind, ...customers, events: { after, through } };
}

function accountCustomers(read: WarehouseRead, kind: 'all' | 'changed', span: Window[]): Pick<CustomerSelection, 'customers' | 'count'> {
  const range = kind === 'changed' ? [span[0]!.start, span.at(-1)!.end] : [span.at(-1)!.end];
  return pagedSelection(read, (conn, after) => {
    const listed = `SELECT 1 FROM ${conn.schemaSql}._etl_account_windows w WHERE w.customer_id = a.customer_id`;
    const changed =
      kind === 'changed'
        ? `AND EXISTS (${listed} AND w._window_start BETWEEN CAST($2 AS DATE) AND CAST($3 AS DATE))`
        : // a first run from an early first_day asks nobody for the months before the program's customers existed
          `AND (EXISTS (${listed} AND w._window_start <= CAST($2 AS DATE)) OR NOT EXISTS (${listed}))`;
    return {
      from: `FROM (SELECT a.customer_id, a.phone, a.email FROM ${conn.schemaSql}.accounts a WHERE a.customer_id > $1 ${changed}) s`,
      params: [after, ...range],
    };
  });
}

/**
 * The customers of the `loyalty_events` numbered in (`after`, `through`], in key order, each once, with the
 * phone and e-mail `accounts` holds (the event's phone when the account is not loaded yet). One with neither
 * cannot be asked: the stream rejects it.
 */
function eventCustomers(read: WarehouseRead, after: number, through: number): Pick<CustomerSelection, 'customers' | 'count'> {
  return pagedSelection(read, (conn, last) => ({
    from: `FROM (SELECT e.customer_id, COALESCE(a.phone, e.phone) AS phone, a.email
                   FROM (SELECT customer_id, MAX(phone) AS phone FROM ${conn.schemaSql}.loyalty_events
                          WHERE seq > $1 AND seq <= $2 AND customer_id > $3 GROUP BY customer_id) e
                   LEFT JOIN ${conn.schemaSql}.accounts a ON a.customer_id = e.customer_id) s`,
    params: [after, through, last],
  }));
}
