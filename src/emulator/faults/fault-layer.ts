import { setTimeout as sleep } from 'node:timers/promises';
import type { DataViewHook } from '../http/export-page-view.js';
import type { EmulatorRequest, EmulatorResponse, Middleware } from '../http/request-pipeline.js';
import { SourceError, json } from '../http/responses.js';
import { driftView } from './drift-view.js';
import { type ResolvedFaults, hasFaults } from './fault-options.js';
import { RequestDice } from './request-dice.js';

/** What the fault layer did since its faults were last set. */
export interface FaultCounts {
  /** Source requests that went through the layer. */
  requests: number;
  hangs: number;
  serverErrors: number;
  tooManyRequests: number;
  errorBodies: number;
  cutBodies: number;
  /** Page reads that saw a drifting listing changed. */
  driftedReads: number;
  /** Requests answered 503 because the source is down (`downAfter`). */
  down: number;
}

const NO_COUNTS: FaultCounts = {
  requests: 0,
  hangs: 0,
  serverErrors: 0,
  tooManyRequests: 0,
  errorBodies: 0,
  cutBodies: 0,
  driftedReads: 0,
  down: 0,
};

const ERROR_BODIES: Record<number, () => { code: number; message: string }> = {
  1002: () => ({ code: 1002, message: SourceError.fieldsEmpty('page').message }),
  1004: () => ({ code: 1004, message: SourceError.notUnique('phone').message }),
  1006: () => ({ code: 1006, message: SourceError.invalidFields('start').message }),
  1010: () => ({ code: 1010, message: SourceError.atLeastOneRequired('phone, email').message }),
};

/**
 * Injects the faults of {@link ResolvedFaults} through the emulator's seams: a middleware (latency, hangs,
 * 5xx, 429, error bodies, cut bodies, an outage) and a data view (drift). Faults can be replaced while the
 * emulator runs; doing so restarts their counts and their generator.
 */
export class FaultLayer {
  private current: ResolvedFaults;
  private dice: RequestDice;
  private sourceRequests = 0;
  private tally: FaultCounts = { ...NO_COUNTS };
  private readonly drift = driftView(
    () => this.current,
    () => void this.tally.driftedReads++,
  );

  constructor(faults: ResolvedFaults) {
    this.current = faults;
    this.dice = new RequestDice(faults.seed);
  }

  /** The faults in force. */
  get faults(): ResolvedFaults {
    return this.current;
  }

  /** What was injected since the faults were set. */
  get counts(): FaultCounts {
    return { ...this.tally };
  }

  /** Replaces the faults in force, from the next request on. */
  set(faults: ResolvedFaults): void {
    this.current = faults;
    this.dice = new RequestDice(faults.seed);
    this.sourceRequests = 0;
    this.tally = { ...NO_COUNTS };
    this.drift.reset();
  }

  /** The data view that makes listings drift. */
  get dataView(): DataViewHook {
    return this.drift.hook;
  }

  /** The middleware that delays, fails, hangs or cuts source requests (never `/_emulator/…`). */
  readonly middleware: Middleware = async (request, next) => {
    const faults = this.current;
    if (request.path.startsWith('/_emulator/') || !hasFaults(faults)) return next(request);
    this.tally.requests++;
    const down = faults.downAfter !== null && ++this.sourceRequests > faults.downAfter;
    // Every draw is made up front, so a request's fate does not depend on which branch an earlier one took.
    const random = this.dice.roll(request);
    const delay = faults.latencyMs + faults.jitterMs * random.next();
    let band = random.next();
    const variant = random.next();
    const cutAt = random.next();

    if (!down && (band -= faults.hangRate) < 0) {
      this.tally.hangs++;
      await untilGone(request);
      throw new Error('the client gave up on a hung request');
    }
    if (delay > 0) await sleep(delay, undefined, { signal: request.signal });
    if (down) {
      this.tally.down++;
      return json(503, { code: 503, message: 'Service Unavailable' });
    }
    if ((band -= faults.serverErrorRate) < 0) {
      this.tally.serverErrors++;
      return serverError(variant);
    }
    if ((band -= faults.tooManyRequestsRate) < 0) {
      this.tally.tooManyRequests++;
      return {
        status: 429,
        headers: { 'content-type': 'application/json; charset=utf-8', 'retry-after': String(faults.retryAfterSeconds) },
        body: '{"code":429,"message":"Too Many Requests"}',
      };
    }
    if ((band -= faults.errorBodyRate) < 0) {
      this.tally.errorBodies++;
      return json(200, ERROR_BODIES[faults.errorBodyCode]!());
    }
    const response = await next(request);
    if (
      (band -= faults.cutBodyRate) < 0 &&
      response.status === 200 &&
      typeof response.body === 'string' &&
      response.body.length >= 2
    ) {
      this.tally.cutBodies++;
      return cutBody(response, response.body, cutAt, variant < 0.5);
    }
    return response;
  };
}

/** 500 and 503 with the source's JSON error body, 502 as a proxy's HTML page. */
function serverError(variant: number): EmulatorResponse {
  if (variant < 1 / 3) return json(500, { code: 500, message: 'Internal server error' });
  if (variant < 2 / 3)
    return {
      status: 502,
      headers: { 'content-type': 'text/html' },
      body: '<html><body><h1>502 Bad Gateway</h1></body></html>',
    };
  return json(503, { code: 503, message: 'Service Unavailable' });
}

/**
 * The body cut off mid-JSON at a share `cutAt` of its length: either the connection is reset after the
 * first part (the announced length is never reached) or the first part is sent as a complete, short body.
 */
function cutBody(response: EmulatorResponse, whole: string, cutAt: number, reset: boolean): EmulatorResponse {
  const part = whole.slice(0, 1 + Math.floor(cutAt * (whole.length - 2)));
  if (!reset) return { ...response, body: part };
  async function* resetAfterPart(): AsyncGenerator<string> {
    yield part;
    throw new Error('connection reset mid-body');
  }
  return {
    ...response,
    headers: { ...response.headers, 'content-length': String(Buffer.byteLength(whole)) },
    body: resetAfterPart(),
  };
}

function untilGone(request: EmulatorRequest): Promise<void> {
  if (request.signal.aborted) return Promise.resolve();
  return new Promise((resolve) => request.signal.addEventListener('abort', () => resolve(), { once: true }));
}
