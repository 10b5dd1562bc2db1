import type { SqlConnection } from '../load/warehouse/sql-connection.js';
import type { CustomerSelection, SelectedCustomer, WarehouseRead } from './selected-customers.js';

/**
 * Customers read from the warehouse per query: bounded memory whatever the number of customers. Each query scans
 * the directory and its observations again, so the number of pages is what costs, and the page is large.
 */
const PAGE = 50_000;

/**
 * A selection's query: `FROM …` a relation of `customer_id, phone, email` holding the customers after `after`
 * in key order, with its parameters. With `swept`, the relation also has `swept` (1 for a customer the postings
 * sweep takes) and `read_through` (the last day of the span that last asked it, or null).
 */
export type SelectionQuery = (conn: SqlConnection, after: string) => { from: string; params: unknown[]; swept?: true };

/** A customer row of a selection, with the sweep's columns when the query has them. */
export interface SelectedRow {
  customer_id: string;
  phone: string | null;
  email: string | null;
  swept?: number | string | boolean | null;
  read_through?: string | null;
}

/**
 * The customers of a selection made by one query, read in pages in key order, and how many it holds: the count
 * runs the same query, so it is what the pages hold (the selection reads tables that only the span's own commit
 * or an earlier stream of the run writes).
 */
export function pagedSelection(
  read: WarehouseRead,
  query: SelectionQuery,
  customer: (row: SelectedRow) => SelectedCustomer = (r) => ({
    customerId: r.customer_id,
    phone: r.phone,
    email: r.email,
  }),
): Pick<CustomerSelection, 'customers' | 'count'> {
  return {
    customers: pages(read, query, customer),
    count: () =>
      read(async (conn) => {
        const { from, params } = query(conn, '');
        const [row] = await conn.all<{ n: number | string | bigint }>(`SELECT COUNT(*) AS n ${from}`, params);
        return Number(row?.n ?? 0);
      }),
  };
}

async function* pages(
  read: WarehouseRead,
  query: SelectionQuery,
  customer: (row: SelectedRow) => SelectedCustomer,
): AsyncGenerator<SelectedCustomer> {
  let after = '';
  for (;;) {
    const rows = await read((conn) => {
      const { from, params, swept } = query(conn, after);
      return conn.all<SelectedRow>(
        `SELECT customer_id, phone, email${swept ? ', swept, read_through' : ''} ${from} ORDER BY customer_id LIMIT ${PAGE}`,
        params,
      );
    });
    for (const r of rows) yield customer(r);
    if (rows.length < PAGE) return;
    after = rows.at(-1)!.customer_id;
  }
}
