import { KindedError } from '../plan/error-kind.js';
import type { Window } from '../plan/windows.js';
import type { WindowCounts } from '../state/ledger.js';

/** The errors of pipeline/, in one place. */

/** The process was asked to stop (SIGINT, SIGTERM): the run ends as `interrupted`. */
export class RunInterruptedError extends KindedError {
  override readonly name = 'RunInterruptedError';
  readonly kind = 'interrupted';
  constructor(readonly signal: NodeJS.Signals) {
    super(`interrupted by ${signal}`);
  }
}

/**
 * Reading a span stopped with `cause` after its first windows were read to the end: those were committed
 * (`loaded`), the others (`failed`) were not.
 */
export class SpanPartlyLoadedError extends Error {
  override readonly name = 'SpanPartlyLoadedError';

  constructor(
    override readonly cause: unknown,
    readonly loaded: WindowCounts[],
    readonly failed: Window[],
  ) {
    super(cause instanceof Error ? cause.message : String(cause));
  }
}

/** A window whose share of rejected records passed the threshold, or whose every record was rejected. */
export class RejectThresholdError extends Error {
  override readonly name = 'RejectThresholdError';
}

/** A span the source counts as holding records, of which reading its windows found none. */
export class UnreadRecordsError extends Error {
  override readonly name = 'UnreadRecordsError';
}
