import { KindedError } from '../plan/error-kind.js';

/** The errors of state/, in one place. */

/** The lock a run needs is held by another live run; nothing was started. */
export class JobBusyError extends KindedError {
  override readonly name = 'JobBusyError';
  readonly kind = 'busy';
}

/** A span's windows are no longer claimed by the run committing them: another worker took them over. */
export class ClaimLostError extends Error {
  override readonly name = 'ClaimLostError';
}
