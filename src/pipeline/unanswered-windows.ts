import { RetriableSourceError } from '../source/source-errors.js';

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
 * Counts the windows in a row the source gave no answer to, across every stream and lane of a run, and says when
 * they reach the limit: a gone source would otherwise be asked, with every retry, for each window left.
 */
export class UnansweredWindows {
  private inARow = 0;

  constructor(
    /** Windows in a row without an answer that make the source gone; 0: never. */
    private readonly limit: number,
    /** Called when the limit is reached, with the windows in a row and the last failure's message. */
    private readonly gone: (windowsInARow: number, lastFailure: string) => void,
  ) {}

  /** A window, or a count of windows, got an answer: the source is there. */
  answered(): void {
    this.inARow = 0;
  }

  /** A window failed for `error`. */
  failed(error: unknown): void {
    if (!gotNoAnswer(error)) return this.answered();
    this.inARow++;
    if (this.limit > 0 && this.inARow >= this.limit)
      this.gone(this.inARow, error instanceof Error ? error.message : String(error));
  }
}
