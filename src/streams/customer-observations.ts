import type { Row, TableSpec } from '../load/table-spec.js';
import type { CustomerObservation } from './stream.js';

/**
 * When each customer was last asked by each per-customer stream, and what the service answered: `answered`,
 * `not_found` (`1005`: no data) or `unaskable` (no phone nor e-mail, or `1010`). The sweeps ask the customers
 * observed longest ago first; `status` and `verify` read how stale the oldest observation is, and a postings
 * window's ledger counts the rows of the customers a span did not ask.
 */
export const customerObservationsTable: TableSpec = {
  name: '_etl_customer_observations',
  key: ['stream', 'customer_id'],
  merge: { kind: 'upsert' },
  windowless: true,
  columns: [
    { name: 'stream', type: 'text' },
    { name: 'customer_id', type: 'text' },
    { name: 'observed_at', type: 'timestamptz' },
    { name: 'outcome', type: 'text' },
  ],
};

/** The rows of `_etl_customer_observations` for customers `stream` asked. */
export function observationRows(stream: string, observed: readonly CustomerObservation[]): Row[] {
  return observed.map((o) => ({ stream, customer_id: o.customerId, observed_at: o.observedAt, outcome: o.outcome }));
}
