import type { StreamName } from '../plan/job-plan.js';
import { accountsStream } from './accounts.js';
import { loyaltyPostingsStream } from './loyalty-postings.js';
import { loyaltyStatusStream } from './loyalty-status.js';
import { surveysStream } from './surveys.js';
import type { StreamDefinition } from './stream.js';
import { vouchersStream } from './vouchers.js';

const streams: Record<StreamName, StreamDefinition> = {
  accounts: accountsStream,
  surveys: surveysStream,
  loyalty_postings: loyaltyPostingsStream,
  loyalty_status: loyaltyStatusStream,
  vouchers: vouchersStream,
};

/**
 * Every stream this build can load, in the order a job runs them: accounts first (the others read its customers),
 * postings before the state streams (a posting loaded for the night is a sign of change they ask about).
 */
export const STREAM_ORDER: StreamName[] = ['accounts', 'surveys', 'loyalty_postings', 'loyalty_status', 'vouchers'];

/** The definition of a stream. */
export function streamDefinition(name: StreamName): StreamDefinition {
  return streams[name];
}
