import type { CustomerIdentity } from '../source/loyalty-api.js';
import { FieldsRequiredError } from '../source/source-errors.js';

/**
 * A customer the service cannot be asked about: recorded in `_etl_rejects` by the per-customer stream that met it,
 * and skipped, so that one such customer never holds back the windows of everyone else.
 */
export interface CustomerReject {
  /** The customer as the warehouse knows it. */
  payload: { customerId: string; phone: string | null; email: string | null };
  /** What could not be asked and why, e.g. `postings of C000042: the customer has neither phone nor e-mail …`. */
  error: string;
}

/** What asking about one customer gave: the answer, or why the service could not be asked. */
export type Asked<T> = { answer: T } | { rejected: CustomerReject };

/**
 * Asks the service about one customer (`what` names the call, e.g. `postings of C000042`). Every per-customer
 * endpoint finds a customer by phone or e-mail: a customer with neither is not asked at all, and one the service
 * answers `1010` for ("at least one of the following fields is required") is not asked again. Both come back as
 * a {@link CustomerReject}; any other failure is thrown, as it concerns the source rather than the customer.
 */
export async function askCustomer<T>(
  customer: CustomerIdentity,
  what: string,
  ask: () => Promise<T>,
): Promise<Asked<T>> {
  const payload = { customerId: customer.customerId, phone: customer.phone, email: customer.email };
  if (!customer.phone && !customer.email) {
    return {
      rejected: {
        payload,
        error: `${what}: the customer has neither phone nor e-mail, so the service cannot be asked about it; skipped`,
      },
    };
  }
  try {
    return { answer: await ask() };
  } catch (error) {
    if (!(error instanceof FieldsRequiredError)) throw error;
    return {
      rejected: { payload, error: `${error.message}: the service cannot be asked about this customer; skipped` },
    };
  }
}
