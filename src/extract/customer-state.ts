import type { CustomerIdentity } from '../source/loyalty-api.js';
import { DataNotFoundError } from '../source/source-errors.js';
import { askCustomer, type CustomerReject } from './askable-customer.js';

/**
 * What one customer's state read gave, as the state streams stage it (and reject it, whole, when it is bad):
 * - `answered`: the service's answer, raw;
 * - `not_found`: the service answered `1005 Data Not Found` — no data, not an error;
 * - `unaskable`: the customer cannot be asked (no phone nor e-mail, or `1010`); recorded so that the sweep moves
 *   past it instead of picking it again every night.
 * `observedAt` is the instant the answer arrived (ISO UTC).
 */
export type CustomerStateRecord =
  | { customerId: string; observedAt: string; outcome: 'answered'; answer: unknown }
  | { customerId: string; observedAt: string; outcome: 'not_found' | 'unaskable' };

/** One customer's state read, and why it could not be asked, if it could not. */
export interface CustomerStateRead {
  record: CustomerStateRecord;
  rejected?: CustomerReject;
}

/**
 * Asks the service about one customer's state (`what` names the call, e.g. `loyalty of C000042`), with the rules
 * every per-customer stream shares ({@link askCustomer}); `1005` is the service's "no data".
 */
export async function readCustomerState(
  customer: CustomerIdentity,
  what: string,
  ask: () => Promise<unknown>,
  observed: () => string = () => new Date().toISOString(),
): Promise<CustomerStateRead> {
  const { customerId } = customer;
  const asked = await askCustomer(customer, what, async () => {
    try {
      return { outcome: 'answered' as const, answer: await ask() };
    } catch (error) {
      if (!(error instanceof DataNotFoundError)) throw error;
      return { outcome: 'not_found' as const };
    }
  });
  const observedAt = observed();
  if ('rejected' in asked)
    return { record: { customerId, observedAt, outcome: 'unaskable' }, rejected: asked.rejected };
  return { record: { customerId, observedAt, ...asked.answer } };
}
