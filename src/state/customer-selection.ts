import type { CustomerRule } from '../plan/customer-rule.js';
import type { Window } from '../plan/windows.js';
import { lastEventSeq, readEventBookmark } from './event-bookmark.js';
import type { CustomerSelection, CustomerSelectionKind, SelectedCustomer, WarehouseRead } from './selected-customers.js';
import { signsAndSweepCustomers } from './sweep-selection.js';

/** Customers read from the warehouse per query: bounded memory whatever the number of customers. */
const PAGE = 5000;

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
  if (kind !== 'webhook') return { kind, customers: accountCustomers(read, kind, span) };
  const { after, through } = await read(async (conn) => ({ after: await readEventBookmark(conn, job, stream), through: await lastEventSeq(conn) }));
  const customers = after === undefined ? accountCustomers(read, 'all', span) : eventCustomers(read, after, through);
  return { kind, customers, events: { after, through } };
}

async function* accountCustomers(read: WarehouseRead, kind: 'all' | 'changed', span: Window[]): AsyncGenerator<SelectedCustomer> {
  const range = kind === 'changed' ? [span[0]!.start, span.at(-1)!.end] : [span.at(-1)!.end];
  let after = '';
  for (;;) {
    const rows = await read((conn) => {
      const listed = `SELECT 1 FROM ${conn.schemaSql}._etl_account_windows w WHERE w.customer_id = a.customer_id`;
      const changed =
        kind === 'changed'
          ? `AND EXISTS (${listed} AND w._window_start BETWEEN CAST($2 AS DATE) AND CAST($3 AS DATE))`
          : // a first run from an early first_day asks nobody for the months before the program's customers existed
            `AND (EXISTS (${listed} AND w._window_start <= CAST($2 AS DATE)) OR NOT EXISTS (${listed}))`;
      return conn.all<{ customer_id: string; phone: string | null; email: string | null }>(
        `SELECT a.customer_id, a.phone, a.email FROM ${conn.schemaSql}.accounts a WHERE a.customer_id > $1 ${changed} ORDER BY a.customer_id LIMIT ${PAGE}`,
        [after, ...range],
      );
    });
    for (const r of rows) yield { customerId: r.customer_id, phone: r.phone, email: r.email };
    if (rows.length < PAGE) return;
    after = rows.at(-1)!.customer_id;
  }
}

/**
 * The customers of the `loyalty_events` numbered in (`after`, `through`], in key order, each once, with the
 * phone and e-mail `accounts` holds (the event's phone when the account is not loaded yet). One with neither
 * cannot be asked: the stream rejects it.
 */
async function* eventCustomers(read: WarehouseRead, after: number, through: number): AsyncGenerator<SelectedCustomer> {
  let last = '';
  for (;;) {
    const rows = await read((conn) =>
      conn.all<{ customer_id: string; phone: string | null; email: string | null }>(
        `SELECT e.customer_id, COALESCE(a.phone, e.phone) AS phone, a.email
           FROM (SELECT customer_id, MAX(phone) AS phone FROM ${conn.schemaSql}.loyalty_events
                  WHERE seq > $1 AND seq <= $2 AND customer_id > $3 GROUP BY customer_id) e
           LEFT JOIN ${conn.schemaSql}.accounts a ON a.customer_id = e.customer_id
          ORDER BY e.customer_id LIMIT ${PAGE}`,
        [after, through, last],
      ),
    );
    for (const r of rows) yield { customerId: r.customer_id, phone: r.phone, email: r.email };
    if (rows.length < PAGE) return;
    last = rows.at(-1)!.customer_id;
  }
}
