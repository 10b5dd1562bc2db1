/**
 * Spaces request starts `1000 / perSecond` ms apart, so that no more than `perSecond` begin in any one-second
 * interval, shared by every caller of the same limiter. Start times are handed out in order, so concurrent
 * callers queue fairly; a caller never starts before its time, even when a timer fires early.
 *
 * @example
 * const limiter = new RateLimiter(20);
 * await limiter.take(); // at most 20 of these resolve in any second
 */
export class RateLimiter {
  private readonly interval: number;
  private next = 0;

  constructor(
    perSecond: number,
    private readonly now: () => number = () => performance.now(),
    private readonly sleep: (ms: number) => Promise<void> = (ms) => new Promise((r) => setTimeout(r, ms)),
  ) {
    if (!(perSecond > 0)) throw new RangeError('requests per second must be positive');
    this.interval = 1000 / perSecond;
  }

  /** Resolves when the caller may start its request. */
  async take(): Promise<void> {
    const at = Math.max(this.now(), this.next);
    this.next = at + this.interval;
    for (let wait = at - this.now(); wait > 0; wait = at - this.now()) await this.sleep(Math.max(1, Math.ceil(wait)));
  }

  /**
   * No start before `until` (a time on this limiter's clock): when the source answers 429 with
   * `Retry-After`, every caller waits, not only the one that was refused.
   */
  holdUntil(until: number): void {
    this.next = Math.max(this.next, until);
  }
}
