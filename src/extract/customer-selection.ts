import type { PostingsSelection } from '../config/config-schema.js';
import type { Destination } from '../load/destination.js';
import type { Window } from '../plan/windows.js';
import type { CustomerIdentity } from '../source/loyalty-api.js';

/** Customers read from the warehouse per query: bounded memory whatever the number of customers. */
const PAGE = 5000;

/**
 * The customers the postings stream asks about for a span, streamed from the warehouse in key order:
 * - `all`: every customer in `accounts` (complete);
 * - `changed`: customers whose account was seen in one of the span's windows (`_etl_account_windows`) —
 *   cheaper, and misses postings of customers whose profile did not change in the window.
 * (`webhook` is {@link selectEventCustomers}: it keeps a bookmark.)
 */
export async function* selectCustomers(destination: Destination, selection: Exclude<PostingsSelection, 'webhook'>, span: Window[]): AsyncGenerator<CustomerIdentity> {
  const from = span[0]!.start;
  const to = span.at(-1)!.end;
  let after = '';
  for (;;) {
    const rows = await destination.withConnection((conn) => {
      const accounts = `${conn.schemaSql}.accounts`;
      const changed =
        selection === 'changed'
          ? `AND EXISTS (SELECT 1 FROM ${conn.schemaSql}._etl_account_windows w WHERE w.customer_id = a.customer_id AND w._window_start BETWEEN CAST($2 AS DATE) AND CAST($3 AS DATE))`
          : '';
      const params = selection === 'changed' ? [after, from, to] : [after];
      return conn.all<{ customer_id: string; phone: string | null; email: string | null }>(
        `SELECT a.customer_id, a.phone, a.email FROM ${accounts} a WHERE a.customer_id > $1 ${changed} ORDER BY a.customer_id LIMIT ${PAGE}`,
        params,
      );
    });
    for (const r of rows) yield { customerId: r.customer_id, phone: r.phone, email: r.email };
    if (rows.length < PAGE) return;
    after = rows.at(-1)!.customer_id;
  }
}

/**
 * Customers named by loyalty webhook events numbered in (`after`, `through`], found by `selectEventCustomers`. One
 * neither in `accounts` nor with a phone in the event cannot be asked: the stream rejects it.
 */
export interface EventCustomers {
  customers: AsyncIterable<CustomerIdentity>;
}

/**
 * The customers of the `loyalty_events` numbered in (`after`, `through`], in key order, each once, with the
 * phone and e-mail `accounts` holds (the event's phone when the account is not loaded yet).
 */
export function eventCustomers(destination: Destination, after: number, through: number): EventCustomers {
  async function* customers(): AsyncGenerator<CustomerIdentity> {
    let last = '';
    for (;;) {
      const rows = await destination.withConnection((conn) =>
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
  return { customers: customers() };
}
