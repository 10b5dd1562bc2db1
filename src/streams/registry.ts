import type { StreamName } from '../plan/job-plan.js';
import { accountsStream } from './accounts.js';
import { loyaltyPostingsStream } from './loyalty-postings.js';
import { surveysStream } from './surveys.js';
import type { StreamDefinition } from './stream.js';

const streams: Record<StreamName, StreamDefinition> = {
  accounts: accountsStream,
  surveys: surveysStream,
  loyalty_postings: loyaltyPostingsStream,
};

/** Every stream this build can load, in the order a job runs them (accounts first: postings read its customers). */
export const STREAM_ORDER: StreamName[] = ['accounts', 'surveys', 'loyalty_postings'];

/** The definition of a stream. */
export function streamDefinition(name: StreamName): StreamDefinition {
  return streams[name];
}
