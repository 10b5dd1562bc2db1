/**
 * Spaces request starts so that no more than `perSecond` begin in any one-second interval, shared by every
 * caller of the same limiter. Start times are handed out in order, so concurrent callers queue fairly.
 */
export class RateLimiter {
  private readonly interval: number;
  private next = 0;

  constructor(perSecond: number, private readonly now: () => number = () => performance.now()) {
    this.interval = 1000 / perSecond;
  }

  /** Resolves when the caller may start its request. */
  async take(): Promise<void> {
    const now = this.now();
    const at = Math.max(now, this.next);
    this.next = at + this.interval;
    const wait = at - now;
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
  }
}
