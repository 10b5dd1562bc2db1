/**
 * Which customers a per-customer stream asks for a span, as its declaration states it:
 * - `all`, `changed`, `webhook`: the postings selections (`jobs.<job>.postings.customers`);
 * - `signs-and-sweep`: the state streams' selection — every customer with a sign of change in the span (an
 *   account change, a posting, a webhook event) plus the rolling sweep that asks every customer at least once in
 *   `sweepDays` nights (`jobs.<job>.sweep_days`).
 */
export type CustomerRule = { kind: 'all' | 'changed' | 'webhook' } | { kind: 'signs-and-sweep'; sweepDays: number };
