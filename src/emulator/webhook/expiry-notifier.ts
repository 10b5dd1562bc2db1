import type { ActivityOverlay } from '../model/activity-overlay.js';
import { expiryInstantsBetween } from '../model/point-expiry.js';
import { loyaltyUpdatedBodyOf } from './loyalty-updated-body.js';
import type { WebhookDispatcher } from './webhook-dispatcher.js';

/** Customers scanned between two turns of the event loop, so a large scan does not stall requests. */
const SCAN_SLICE = 256;

/**
 * Fires the loyalty webhook for points that expire without a request. Points only ever expire at a month
 * boundary ({@link expiryInstantsBetween}), so a check looks at the boundaries the clock passed since the
 * last check and, only when there is one, at every customer who existed by then: no timer per customer,
 * and nothing kept per customer. Each (customer, expiry instant) at which points were left to expire gets
 * one `LOYALTY_POINT_UPDATED` with `origin.source` `EXPIRY`, its body as of that instant. Expiries before the
 * emulator started, or at or before a previous check, are never sent.
 */
export class ExpiryNotifier {
  private checkedThroughMs: number;
  private queue: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly activity: ActivityOverlay,
    private readonly webhooks: WebhookDispatcher,
    private readonly now: () => number,
  ) {
    this.checkedThroughMs = now();
  }

  /** Sends the events due between the last check and the clock now; resolves with how many were queued. Checks run one at a time. */
  check(): Promise<number> {
    const run = this.queue.then(() => this.scan());
    this.queue = run.catch(() => undefined);
    return run;
  }

  private async scan(): Promise<number> {
    const fromMs = this.checkedThroughMs;
    const toMs = this.now();
    // A clock moved backwards checks nothing until it passes the last check again.
    if (toMs <= fromMs) return 0;
    this.checkedThroughMs = toMs;
    const instants = expiryInstantsBetween(fromMs, toMs, this.activity.data.days);
    if (instants.length === 0) return 0;
    const lastMs = instants.at(-1)!;
    const { size } = this.activity.data.directory;
    let sent = 0;
    for (let i = 0; i < size && this.activity.existsAt(i, lastMs); i++) {
      if (i % SCAN_SLICE === SCAN_SLICE - 1) await new Promise((resolve) => setImmediate(resolve));
      const latest = this.activity.loyaltyOf(i, lastMs, false);
      for (const expiresMs of instants) {
        const detail = latest.details.find((d) => d.expiresMs === expiresMs);
        if (!detail || detail.expired <= 0) continue;
        const state = expiresMs === lastMs ? latest : this.activity.loyaltyOf(i, expiresMs, false);
        this.webhooks.notify(loyaltyUpdatedBodyOf(this.activity.latest(i), state, 'EXPIRY'));
        sent++;
      }
    }
    return sent;
  }
}
