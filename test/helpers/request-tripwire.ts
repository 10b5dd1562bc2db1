import type { EmulatorRequest, Middleware } from '../../src/emulator/index.js';

/** Which request trips the wire: the `nth` (from 1) to reach `path` once armed. */
export interface TripPoint {
  path: string;
  nth: number;
  /**
   * `held`: the request is kept waiting, unanswered, from when it arrives until the wire is disarmed, so the
   * client is stopped in the middle of reading; `served`: the wire trips once the response has been handed to the
   * server, so the client is busy with what it just received.
   */
  when: 'held' | 'served';
}

/**
 * Emulator middleware that tells a test the moment a client reaches a chosen request, so that the test can act
 * (kill the client) at a known point of its work rather than at a random instant.
 */
export class RequestTripwire {
  private armed: { point: TripPoint; seen: number; trip: () => void } | undefined;
  private holds: Array<() => void> = [];

  readonly middleware: Middleware = async (request, next) => {
    const armed = this.armed;
    if (!armed || !matches(request, armed.point.path)) return next(request);
    armed.seen++;
    if (armed.seen !== armed.point.nth) return next(request);
    if (armed.point.when === 'held') {
      armed.trip();
      await new Promise<void>((release) => this.holds.push(release));
      return next(request);
    }
    const response = await next(request);
    // the response is written after this returns: the wire trips once it is on its way
    setImmediate(armed.trip);
    return response;
  };

  /** Arms the wire; resolves when `point` is reached. */
  arm(point: TripPoint): Promise<void> {
    return new Promise((trip) => (this.armed = { point, seen: 0, trip }));
  }

  /** Lets every held request go on and passes all requests through again. */
  disarm(): void {
    this.armed = undefined;
    for (const release of this.holds.splice(0)) release();
  }
}

function matches(request: EmulatorRequest, path: string): boolean {
  return request.path === path;
}
