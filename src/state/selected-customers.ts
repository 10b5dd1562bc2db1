import type { SqlConnection } from '../load/warehouse/sql-connection.js';
import type { CustomerRule } from '../plan/customer-rule.js';
import type { Day } from '../plan/days.js';

/** Runs a read on a connection of its own (`Destination.withConnection`). */
export type WarehouseRead = <T>(fn: (conn: SqlConnection) => Promise<T>) => Promise<T>;

/** A customer as the source is asked about: by phone, or by e-mail when there is no phone. */
export interface SelectedCustomer {
  customerId: string;
  phone: string | null;
  email: string | null;
  /**
   * For a customer the postings sweep takes: the first day whose postings are kept (the span's first day for the
   * others). Its postings since it was last asked are read, not only those of the span.
   */
  readFrom?: Day | undefined;
}

/** Which customers a per-customer stream asks for a span (`jobs.<job>.postings.customers`). */
export type CustomerSelectionKind = 'all' | 'changed' | 'webhook';

/** The customers a span asks, and, for `webhook` and `signs-and-sweep`, the events they come from. */
export interface CustomerSelection {
  kind: CustomerRule['kind'];
  customers: AsyncIterable<SelectedCustomer>;
  /** How many customers `customers` holds: one count over the selection's query, for the progress display. */
  count(): Promise<number>;
  /**
   * For `webhook` and `signs-and-sweep`: the events numbered in (`after`, `through`] the selection covers. The span's
   * commit moves the stream's bookmark to `through` (`advanceEventBookmark`); for `webhook`, `after` is undefined on
   * the job's first span, which asks every customer so history starts complete.
   */
  events?: { after: number | undefined; through: number };
}
