import type { LoyaltyApi } from '../source/loyalty-api.js';
import { AuthenticationError } from '../source/source-errors.js';

/**
 * Ends a run early, all of it at once: when the source refuses the credentials (every other request would be
 * refused too) or when the process is interrupted. Once stopped, lanes take no new span, the spans in flight are
 * called off (their requests stop and nothing of them commits), and their windows are left as they were —
 * neither done nor failed — for the next run to take.
 */
export class RunStop {
  private readonly controller = new AbortController();
  private why: Error | undefined;

  /** Why the run was stopped; undefined while it goes on. */
  get reason(): Error | undefined {
    return this.why;
  }

  /** Stops the run for `reason`; the first reason given is kept. */
  stop(reason: Error): void {
    if (this.why) return;
    this.why = reason;
    this.controller.abort(reason);
  }

  /**
   * Whether a span's failure belongs to the stop rather than to its windows: it is what stops the run (the source
   * refused the credentials: the run is stopped here), or the run was stopped and the span called off.
   */
  absorbs(error: unknown): boolean {
    if (error instanceof AuthenticationError) this.stop(error);
    return this.why !== undefined;
  }

  /** Calls off `api`'s requests when the run stops (at once if it has); the returned function lets go of it. */
  callsOff(api: LoyaltyApi): () => void {
    const callOff = () => api.cancel(`the run stopped: ${this.why?.message ?? ''}`);
    if (this.controller.signal.aborted) callOff();
    this.controller.signal.addEventListener('abort', callOff, { once: true });
    return () => this.controller.signal.removeEventListener('abort', callOff);
  }
}
