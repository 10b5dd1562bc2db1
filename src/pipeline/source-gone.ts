import type { StreamName } from '../plan/job-plan.js';
import { RetriableSourceError, SourceError } from '../source/source-errors.js';
import type { JobRunResult, JobWork } from './job-run-request.js';
import type { RunStop } from './run-stop.js';

/**
 * The source gave no answer at all to several windows in a row (`source.stop_after_unanswered_windows`): the run
 * stopped asking it. Until the run settles it (`settled`), `notAttempted` is empty.
 */
export class SourceGoneError extends SourceError {
  override readonly name = 'SourceGoneError';
  constructor(
    /** The source's address, without credentials. */
    readonly source: string,
    /** Windows in a row that got no answer. */
    readonly windowsInARow: number,
    /** The last failure's message. */
    readonly lastFailure: string,
    /** Planned windows of each stream the run did not try, left for the next run. */
    readonly notAttempted: ReadonlyMap<StreamName, number> = new Map(),
    /** What the run did before it stopped, once settled. */
    readonly result?: JobRunResult,
  ) {
    const left = [...notAttempted.values()].reduce((n, w) => n + w, 0);
    super(
      `${source} gave no answer to ${windowsInARow} windows in a row (last: ${lastFailure}); stopped asking it ` +
        `(source.stop_after_unanswered_windows)${left > 0 ? `: ${left} window(s) not attempted, the next run takes them` : ''}`,
      'the source',
    );
  }

  /** The same stop, with what the run did and what it left for the next run. */
  settled(result: JobRunResult, work: JobWork): SourceGoneError {
    return new SourceGoneError(this.source, this.windowsInARow, this.lastFailure, notAttempted(result, work), result);
  }
}

/**
 * Whether `error` (or an error it was caused by) is a failure to get any answer from the source: a refused, reset
 * or timed-out connection, its retries spent. An HTTP answer, even an error, shows the source is there.
 */
export function gotNoAnswer(error: unknown): boolean {
  let e: unknown = error;
  for (let depth = 0; e instanceof Error && depth < 5; depth++, e = e.cause)
    if (e instanceof RetriableSourceError && e.status === undefined) return true;
  return false;
}

/**
 * Counts the windows in a row the source gave no answer to, across every stream and lane of a run, and stops the
 * run once they reach the limit: a gone source would otherwise be asked, with every retry, for each window left.
 */
export class UnansweredWindows {
  private inARow = 0;

  constructor(
    private readonly limit: number,
    private readonly source: string,
    private readonly stop: RunStop,
  ) {}

  /** A window, or a count of windows, got an answer: the source is there. */
  answered(): void {
    this.inARow = 0;
  }

  /** A window failed for `error`. */
  failed(error: unknown): void {
    if (!gotNoAnswer(error)) return this.answered();
    this.inARow++;
    if (this.limit > 0 && this.inARow >= this.limit) {
      const message = error instanceof Error ? error.message : String(error);
      this.stop.stop(new SourceGoneError(this.source, this.inARow, message));
    }
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
