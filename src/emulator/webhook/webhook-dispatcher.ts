/** How the emulator calls loyalty webhook subscribers. */
export interface WebhookOptions {
  /** Subscriber URLs registered from the start. */
  subscribers?: readonly string[];
  /** Attempts per call, the first included; then the call is given up. Default 6. */
  maxAttempts?: number;
  /** Wait before the first retry; it doubles with every further retry, up to `maxRetryDelayMs`. Default 200. */
  retryDelayMs?: number;
  /** Longest wait between two attempts. Default 30 000. */
  maxRetryDelayMs?: number;
  /** Time-out of one attempt. Default 10 000. */
  timeoutMs?: number;
}

/** Counts of webhook calls since the start. */
export interface WebhookStats {
  /** Calls a subscriber answered with a 2xx status. */
  delivered: number;
  /** Calls given up after `maxAttempts` failures. */
  failed: number;
  /** HTTP attempts made, retries included. */
  attempts: number;
  /** Calls not yet delivered nor given up. */
  pending: number;
}

/**
 * Sends loyalty webhook calls. Each subscriber has a queue of its own, delivered in order, one call at a time:
 * a call is retried on a network error, a time-out or a non-2xx status, with exponential back-off, at most
 * `maxAttempts` times, and only then does the next call to that subscriber go out.
 */
export class WebhookDispatcher {
  private readonly urls = new Set<string>();
  private readonly queues = new Map<string, Promise<void>>();
  private readonly counts = { delivered: 0, failed: 0, attempts: 0, pending: 0 };
  private readonly timers = new Set<{ timer: NodeJS.Timeout; resolve: () => void }>();
  private closed = false;
  private readonly maxAttempts: number;
  private readonly retryDelayMs: number;
  private readonly maxRetryDelayMs: number;
  private readonly timeoutMs: number;

  constructor(options: WebhookOptions = {}) {
    this.maxAttempts = options.maxAttempts ?? 6;
    this.retryDelayMs = options.retryDelayMs ?? 200;
    this.maxRetryDelayMs = options.maxRetryDelayMs ?? 30_000;
    this.timeoutMs = options.timeoutMs ?? 10_000;
    if (!Number.isInteger(this.maxAttempts) || this.maxAttempts < 1)
      throw new RangeError('webhooks.maxAttempts must be a positive integer');
    if (!(this.retryDelayMs >= 0) || !(this.maxRetryDelayMs >= 0) || !(this.timeoutMs > 0))
      throw new RangeError('webhook delays must be non-negative and the time-out positive');
    for (const url of options.subscribers ?? []) this.subscribe(url);
  }

  /** Registers a subscriber URL (http or https); calls made before are not sent to it. */
  subscribe(url: string): void {
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      throw new RangeError(`webhook subscriber must be an http(s) URL, got "${url}"`);
    }
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')
      throw new RangeError(`webhook subscriber must be an http(s) URL, got "${url}"`);
    this.urls.add(url);
  }

  /** Removes a subscriber; calls already queued for it are still sent. */
  unsubscribe(url: string): void {
    this.urls.delete(url);
  }

  subscribers(): string[] {
    return [...this.urls];
  }

  /** Queues one call with `body` to every subscriber. */
  notify(body: unknown): void {
    if (this.closed) return;
    const text = JSON.stringify(body);
    for (const url of this.urls) {
      this.counts.pending++;
      const previous = this.queues.get(url) ?? Promise.resolve();
      const next = previous.then(() => this.deliver(url, text));
      this.queues.set(url, next);
      void next.then(() => {
        if (this.queues.get(url) === next) this.queues.delete(url);
      });
    }
  }

  /** Resolves once every call queued so far has been delivered or given up. */
  async settled(): Promise<void> {
    while (this.queues.size > 0) await Promise.all([...this.queues.values()]);
  }

  stats(): WebhookStats {
    return { ...this.counts };
  }

  /** Stops: waiting retries end now and no further attempt is made. */
  close(): void {
    this.closed = true;
    for (const t of this.timers) {
      clearTimeout(t.timer);
      t.resolve();
    }
    this.timers.clear();
  }

  private async deliver(url: string, body: string): Promise<void> {
    try {
      for (let attempt = 1; attempt <= this.maxAttempts && !this.closed; attempt++) {
        if (attempt > 1) await this.sleep(Math.min(this.maxRetryDelayMs, this.retryDelayMs * 2 ** (attempt - 2)));
        if (this.closed) break;
        this.counts.attempts++;
        try {
          const response = await fetch(url, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body,
            signal: AbortSignal.timeout(this.timeoutMs),
          });
          await response.arrayBuffer().catch(() => undefined);
          if (response.ok) {
            this.counts.delivered++;
            return;
          }
        } catch {
          // refused, reset or timed out: retried like a failure status
        }
      }
      this.counts.failed++;
    } finally {
      this.counts.pending--;
    }
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const entry = {
        timer: setTimeout(() => {
          this.timers.delete(entry);
          resolve();
        }, ms),
        resolve,
      };
      this.timers.add(entry);
    });
  }
}
