/** Time kept in hand on top of every second, so that jitter on the way to the source cannot push it over. */
export const RATE_SLACK_MS = 50;

/**
 * Grants request starts, shared by every caller of the same limiter, so that no more than `perSecond` begin
 * in any one-second interval: the times of the last `perSecond` starts are kept, and a start is granted
 * only when the oldest of them is a second (plus {@link RATE_SLACK_MS}) old. The check is made at the moment
 * the start is granted (a late timer cannot squeeze two starts closer), the caller stamps the moment its
 * request actually leaves (`sent()`, as often as it learns of a later moment), and callers are served in the order
 * they asked.
 *
 * Starts are not spaced out further: how many requests run at once is the concurrency cap's business, and
 * spacing them would cost throughput whenever the limit is far above what latency allows. A rate below 1
 * per second becomes "one start per `1 / perSecond` seconds".
 *
 * @example
 * const limiter = new RateLimiter(20);
 * await limiter.take(); // at most 20 of these resolve in any second
 */
export class RateLimiter {
  /** Starts per second granted now. */
  private rate = 1;
  /** How many starts the window holds, and how long the window is. */
  private capacity = 1;
  private windowMs = 1000;
  /** Times of the last `capacity` starts, as a ring (a start is an object, so `sent()` finds it wherever it moved). */
  private starts: Array<{ at: number }> = [];
  private oldest = 0;
  /** No start before this (Retry-After). */
  private heldUntil = Number.NEGATIVE_INFINITY;
  private readonly waiting: Array<(slot: { at: number }) => void> = [];
  private timer = false;

  constructor(
    perSecond: number,
    private readonly now: () => number = () => performance.now(),
    private readonly sleep: (ms: number) => Promise<void> = (ms) => new Promise((r) => setTimeout(r, ms)),
  ) {
    this.setRate(perSecond);
  }

  /**
   * Changes the rate from now on (a worker's share of a limit shared with others). The starts of the last window
   * still count: a lower rate keeps the latest starts it allows and grants none until the oldest of them is a
   * window old, so the change never lets more through than either rate would.
   */
  setRate(perSecond: number): void {
    if (!(perSecond > 0)) throw new RangeError('requests per second must be positive');
    this.rate = perSecond;
    const inOrder = [...this.starts.slice(this.oldest), ...this.starts.slice(0, this.oldest)];
    this.capacity = Math.max(1, Math.floor(perSecond));
    this.windowMs = (1000 * this.capacity) / perSecond + RATE_SLACK_MS;
    this.starts = inOrder.slice(-this.capacity);
    this.oldest = 0;
    this.grant();
  }

  /** Starts per second it grants now (the last rate set). */
  get perSecond(): number {
    return this.rate;
  }

  /**
   * Resolves when the caller may start its request, with `sent()` to call the moment it leaves: the start
   * is counted from the latest call (from the grant when `sent` is never called). A request held up between
   * the call to send it and its leaving (a connection to open, a busy process) must be stamped again when it
   * leaves, or its late arrival at the source lands in the same second as the starts granted a window later.
   */
  take(): Promise<{ sent(): void }> {
    return new Promise((resolve) => {
      this.waiting.push((slot) => resolve({ sent: () => this.stamp(slot) }));
      this.grant();
    });
  }

  /**
   * No start before `until` (a time on this limiter's clock): when the source answers 429 with
   * `Retry-After`, every caller waits, not only the one that was refused.
   */
  holdUntil(until: number): void {
    this.heldUntil = Math.max(this.heldUntil, until);
  }

  /** Grants the first waiter its start if it is due, else sleeps until it is. One grant per call. */
  private grant(): void {
    if (this.timer || this.waiting.length === 0) return;
    const now = this.now();
    const windowFree = this.starts.length < this.capacity ? now : this.starts[this.oldest]!.at + this.windowMs;
    const wait = Math.max(this.heldUntil, windowFree) - now;
    if (wait > 0) {
      this.timer = true;
      void this.sleep(Math.max(1, Math.ceil(wait))).then(() => {
        this.timer = false;
        this.grant();
      });
      return;
    }
    const slot = { at: now };
    if (this.starts.length < this.capacity) this.starts.push(slot);
    else {
      this.starts[this.oldest] = slot;
      this.oldest = (this.oldest + 1) % this.capacity;
    }
    this.waiting.shift()!(slot);
    if (this.waiting.length > 0) this.grant();
  }

  /** Moves a start to the moment its request left (never earlier than its grant or an earlier stamp). */
  private stamp(slot: { at: number }): void {
    slot.at = Math.max(slot.at, this.now());
  }
}
