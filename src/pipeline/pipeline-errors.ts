import { KindedError } from '../plan/error-kind.js';
import type { StreamName } from '../plan/job-plan.js';
import { SourceError } from '../source/source-errors.js';
import type { JobRunResult, JobWork } from './job-run-request.js';
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

/**
 * The source gave no answer at all to several spans of windows in a row (`source.stop_after_no_answer`): the run
 * stopped asking it. Until the run settles it (`settled`), `notAttempted` is empty.
 */
export class SourceGoneError extends SourceError {
  override readonly name = 'SourceGoneError';
  constructor(
    /** The source's address, without credentials. */
    readonly source: string,
    /** Spans (or counts of windows) in a row that got no answer. */
    readonly windowsInARow: number,
    /** The last failure's message. */
    readonly lastFailure: string,
    /** Planned windows of each stream the run did not try, left for the next run. */
    readonly notAttempted: ReadonlyMap<StreamName, number> = new Map(),
    /** What the run did before it stopped, once settled. */
    readonly result?: JobRunResult,
    /** Whose the windows left are: the next run's, or the same backfill command's. */
    resumedBy: 'run' | 'backfill' = 'run',
  ) {
    const left = [...notAttempted.values()].reduce((n, w) => n + w, 0);
    const after =
      resumedBy === 'backfill'
        ? ': the same backfill command resumes the windows not done'
        : left > 0
          ? `: ${left} window(s) not attempted, the next run takes them`
          : '';
    super(
      `${source} gave no answer ${windowsInARow} times in a row, each after its retries (last: ${lastFailure}); stopped asking it ` +
        `(source.stop_after_no_answer)${after}`,
      'the source',
    );
  }

  /** The same stop, with what the run did and what it left for the next run. */
  settled(result: JobRunResult, work: JobWork): SourceGoneError {
    return new SourceGoneError(
      this.source,
      this.windowsInARow,
      this.lastFailure,
      notAttempted(result, work),
      result,
      work.kind === 'backfill' ? 'backfill' : 'run',
    );
  }
}

/** Planned windows of each stream that a run neither loaded, found empty nor failed. */
function notAttempted(result: JobRunResult, work: JobWork): Map<StreamName, number> {
  const left = new Map<StreamName, number>();
  if (work.kind !== 'planned') return left;
  for (const [stream, windows] of work.windows) {
    const touched = new Set([
      ...result.loaded.filter((c) => c.stream === stream).map((c) => c.window.start),
      ...result.failed.filter((f) => f.stream === stream).map((f) => f.window.start),
    ]);
    const n = windows.filter((w) => !touched.has(w.start)).length - (result.empty.get(stream) ?? 0);
    if (n > 0) left.set(stream, n);
  }
  return left;
}
