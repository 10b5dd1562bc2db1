import pLimit, { type LimitFunction } from 'p-limit';
import type { Logger } from '../log/logger.js';
import { redact } from '../log/redact.js';
import {
  AuthenticationError,
  CancelledRequestError,
  DataNotFoundError,
  FatalSourceError,
  FieldsRequiredError,
  RetriableSourceError,
  SourceError,
} from './source-errors.js';
import { describeStated, isBusinessCode, statedError } from './error-body.js';
import { RateLimiter } from './rate-limiter.js';
import { withDeparture } from './request-departure.js';
import { DEFAULT_MAX_RESPONSE_BYTES, readBoundedText, ResponseTooLargeError } from './bounded-body.js';

/** Counts the requests of one piece of work (a span) on a client shared by many, and can call them off. */
export interface RequestCounter {
  requests: number;
  /** Of those, the requests tried again after a failure. */
  retries?: number;
  /** When aborted, the work's requests still queued never leave, and those in flight or waiting to retry stop. */
  signal?: AbortSignal;
  /** Receives every answer the work's requests got that is not retried: what the raw archive keeps. */
  keep?: (answer: SourceAnswer) => void;
}

/** An answer of the source as it came: the request (path and query, never the credential), its status and body text. */
export interface SourceAnswer {
  path: string;
  query: Record<string, string>;
  status: number;
  body: string;
  /** When the answer arrived (ISO UTC). */
  at: string;
}

export interface HttpClientOptions {
  baseUrl: string;
  /** Header sent with every request; its value is a secret (it never reaches a message this client makes). */
  auth?: { header: string; value: string };
  /** Time-out of one attempt, from sending the request to the last byte of the body. */
  timeoutMs: number;
  /** Attempts after the first, for failures worth retrying. */
  retries: number;
  /** Request starts per second, shared by every caller of this client. */
  requestsPerSecond: number;
  /** Requests in flight at once, shared by every caller of this client. */
  concurrency: number;
  logger: Logger;
  /** Ceiling of the first backoff; it doubles each attempt, and the wait is drawn from [0, ceiling). Default 250. */
  backoffBaseMs?: number;
  /** Largest backoff ceiling. Default 30000. */
  backoffMaxMs?: number;
  /** The largest answer read, in bytes of its body: a larger one fails its request, unretried. Default 16 MiB. */
  maxResponseBytes?: number;
  /** How the client waits between attempts (tests replace it to see the waits). */
  sleep?: (ms: number) => Promise<void>;
}

/** The longest `Retry-After` honoured: a source asking for more is asked again after this long. */
export const MAX_RETRY_AFTER_MS = 120_000;

/** An answer as the source sent it (see {@link HttpClient.exchange}). */
export interface RawAnswer {
  status: number;
  contentType: string;
  text: string;
}

/** A request as this client sends it: always with its method, which the rate limiter's departure check reads. */
type SourceRequestInit = RequestInit & { method: 'GET' | 'POST' };

/** Characters an HTTP header value may carry (no line breaks or other controls, Latin-1 only). */
const HEADER_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;

/**
 * GETs and POSTs JSON from the source: one place for the auth header, the time-out, the shared rate limit,
 * the concurrency cap and retries.
 *
 * - Retried, up to `retries` times: 5xx, 408, 429, time-outs, network errors, and 2xx answers whose body is
 *   empty or not complete JSON. The wait is the source's `Retry-After` when it sent one (every caller of
 *   the client then waits too), else exponential backoff with full jitter.
 * - Not retried ({@link FatalSourceError}): other 4xx, redirects, 1xxx error bodies; `1005 Data Not Found`
 *   is a {@link DataNotFoundError}, `1010` a {@link FieldsRequiredError}. A 1xxx code is read from the body
 *   whatever the HTTP status (200, 4xx, 5xx) and in each body shape of `error-body.ts`; a 2xx whose body states
 *   an error is never data. After a 401 or 403
 *   ({@link AuthenticationError}) no request is sent any more: each fails with that error. POSTs are retried only after 429, as they may not be repeatable.
 *
 * @example
 * const http = new HttpClient({ baseUrl, timeoutMs: 30_000, retries: 5, requestsPerSecond: 20, concurrency: 4, logger });
 * const page = await http.get('/business-data/accounts', { start, end, page: 1, size: 500 }, `accounts ${start}..${end} page 1`);
 */
export class HttpClient {
  private readonly limiter: RateLimiter;
  private readonly gate: LimitFunction;
  private readonly sleep: (ms: number) => Promise<void>;
  private requests = 0;
  private retried = 0;
  /** The source refused the credentials: every later request fails with this, unsent. */
  private refusal: AuthenticationError | undefined;

  constructor(private readonly options: HttpClientOptions) {
    if (options.auth && !HEADER_VALUE.test(options.auth.value)) {
      throw new FatalSourceError(
        `source.auth: the value of header ${options.auth.header} holds characters no HTTP header can carry (line breaks, control characters or characters beyond Latin-1)`,
        'auth',
      );
    }
    this.limiter = new RateLimiter(options.requestsPerSecond);
    this.gate = pLimit(options.concurrency);
    this.sleep = options.sleep ?? ((ms) => new Promise((r) => setTimeout(r, ms)));
  }

  /**
   * Changes the client's rate limit from now on: the share of `source.requests_per_second` this process may use
   * while other workers use the same source.
   */
  setRequestsPerSecond(perSecond: number): void {
    this.limiter.setRate(perSecond);
  }

  /** Request starts per second this client allows now: `requestsPerSecond`, or the share it was last set to. */
  get requestsPerSecond(): number {
    return this.limiter.perSecond;
  }

  /** Requests sent so far, retries included. */
  get requestCount(): number {
    return this.requests;
  }

  /** Requests tried again so far (each retry once). */
  get retryCount(): number {
    return this.retried;
  }

  /** GET `path` with `query`; resolves to the parsed JSON body. `label` names the call in errors and logs; `counter.requests` counts attempts. */
  get(
    path: string,
    query: Record<string, string | number | boolean>,
    label = path,
    counter?: RequestCounter,
  ): Promise<unknown> {
    const url = new URL(this.options.baseUrl + path);
    for (const [k, v] of Object.entries(query)) url.searchParams.set(k, String(v));
    const keep = counter?.keep;
    const kept =
      keep &&
      ((status: number, body: string) =>
        keep({ path, query: Object.fromEntries(url.searchParams), status, body, at: new Date().toISOString() }));
    return this.gate(() => this.withRetries(url, { method: 'GET' }, label, true, counter, kept));
  }

  /**
   * One GET sent as it is, for looking at a service (`probe`): the answer's status, content type and body text,
   * whatever they are. The same auth header, pace and time-out as every request; no retry, nothing read into the
   * body. A connection that fails or times out is a {@link RetriableSourceError}.
   */
  exchange(path: string, query: Record<string, string | number>, label = path): Promise<RawAnswer> {
    const url = new URL(this.options.baseUrl + path);
    for (const [k, v] of Object.entries(query)) url.searchParams.set(k, String(v));
    return this.gate(async () => {
      const { response, text } = await this.send(url, { method: 'GET' }, label);
      return { status: response.status, contentType: response.headers.get('content-type') ?? '', text };
    });
  }

  /** POST a JSON body to `path`. */
  post(path: string, body: unknown, label = path, counter?: RequestCounter): Promise<unknown> {
    const url = new URL(this.options.baseUrl + path);
    const init: SourceRequestInit = {
      method: 'POST',
      body: JSON.stringify(body),
      headers: { 'content-type': 'application/json' },
    };
    return this.gate(() => this.withRetries(url, init, label, false, counter));
  }

  private async withRetries(
    url: URL,
    init: SourceRequestInit,
    label: string,
    repeatable: boolean,
    counter?: RequestCounter,
    keep?: (status: number, body: string) => void,
  ): Promise<unknown> {
    const { retries, logger } = this.options;
    const signal = counter?.signal;
    for (let attempt = 1; ; attempt++) {
      if (signal?.aborted)
        throw new CancelledRequestError(
          `${label}: called off (${String(signal.reason ?? 'the work it belonged to ended')})`,
          label,
        );
      if (this.refusal) throw this.refusal;
      if (counter) counter.requests++;
      try {
        return await this.once(url, init, label, signal, keep);
      } catch (error) {
        if (error instanceof AuthenticationError) this.refusal ??= error;
        if (!(error instanceof RetriableSourceError) || signal?.aborted) throw error;
        if (!repeatable && error.status !== 429) throw error;
        if (attempt > retries) {
          throw attempt === 1
            ? error
            : new RetriableSourceError(
                `${error.message} (gave up after ${attempt} attempts)`,
                error.endpoint,
                error.status,
                error.retryAfterSeconds,
              );
        }
        const wait = this.waitBefore(attempt + 1, error);
        if (error.retryAfterSeconds !== undefined) this.limiter.holdUntil(performance.now() + wait);
        this.retried++;
        if (counter) counter.retries = (counter.retries ?? 0) + 1;
        logger.warn(
          { endpoint: label, attempt, waitMs: Math.round(wait), reason: error.message },
          'retrying source request',
        );
        await abortable(this.sleep(wait), signal);
      }
    }
  }

  /** The wait before attempt `attempt` (2 or more) after `error`. */
  private waitBefore(attempt: number, error: RetriableSourceError): number {
    if (error.retryAfterSeconds !== undefined) return Math.min(error.retryAfterSeconds * 1000, MAX_RETRY_AFTER_MS);
    const { backoffBaseMs = 250, backoffMaxMs = 30_000 } = this.options;
    return Math.random() * Math.min(backoffMaxMs, backoffBaseMs * 2 ** (attempt - 2));
  }

  private async once(
    url: URL,
    init: SourceRequestInit,
    label: string,
    cancel?: AbortSignal,
    keep?: (status: number, body: string) => void,
  ): Promise<unknown> {
    const { response, text } = await this.send(url, init, label, cancel);
    if (!keep) return interpret(response, text, label);
    try {
      const body = interpret(response, text, label);
      keep(response.status, text);
      return body;
    } catch (error) {
      // the source's final word (1005, a refusal) is an answer too; a failure worth another attempt is not
      if (!(error instanceof RetriableSourceError) && !(error instanceof AuthenticationError))
        keep(response.status, text);
      throw error;
    }
  }

  /** Sends one request at the client's pace and reads the whole answer; a connection that fails is retriable. */
  private async send(
    url: URL,
    init: SourceRequestInit,
    label: string,
    cancel?: AbortSignal,
  ): Promise<{ response: Response; text: string }> {
    const start = await this.limiter.take();
    // a refusal that came while this request waited for its turn holds for it too
    if (this.refusal) throw this.refusal;
    this.requests++;
    const headers = new Headers(init.headers);
    headers.set('accept', 'application/json');
    if (this.options.auth) headers.set(this.options.auth.header, this.options.auth.value);
    let response: Response;
    let text: string;
    // A timer of our own, cleared with the answer: `AbortSignal.timeout` would keep every request's timer (and
    // its signal) alive for the whole time-out, thousands of them at a few hundred requests a second.
    const timeout = new AbortController();
    const timer = setTimeout(
      () => timeout.abort(new DOMException(`no answer within ${this.options.timeoutMs} ms`, 'TimeoutError')),
      this.options.timeoutMs,
    );
    // The span's own signal calls the request off too; its listener goes with the answer, like the timer.
    const callOff = () => timeout.abort(cancel?.reason);
    cancel?.addEventListener('abort', callOff, { once: true });
    try {
      // Counted from now, and again from when the request is written to its connection, which is when it leaves.
      start.sent();
      // A redirect is never followed: the auth header must not travel to another address.
      response = await withDeparture(init.method, url, start.sent, () =>
        fetch(url, { ...init, headers, redirect: 'manual', signal: timeout.signal }),
      );
      text = await readBoundedText(response, this.options.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES);
    } catch (error) {
      if (cancel?.aborted) throw new CancelledRequestError(`${label}: called off while in flight`, label);
      // the same page would be as large again: not worth another attempt
      if (error instanceof ResponseTooLargeError) throw new FatalSourceError(`${label}: ${error.message}`, label);
      throw new RetriableSourceError(`${label}: ${describeFailure(error, this.options.timeoutMs)}`, label);
    } finally {
      clearTimeout(timer);
      cancel?.removeEventListener('abort', callOff);
    }
    return { response, text };
  }
}

/** What an answer of `status` with body `text` means, as a live answer would: its JSON body, or the error it is. */
export function interpretAnswer(status: number, text: string, label: string): unknown {
  return interpret(new Response(null, { status }), text, label);
}

/** `wait`, or less when `signal` is aborted first. */
function abortable(wait: Promise<void>, signal: AbortSignal | undefined): Promise<void> {
  if (!signal) return wait;
  return new Promise((resolve) => {
    const done = () => {
      signal.removeEventListener('abort', done);
      resolve();
    };
    signal.addEventListener('abort', done, { once: true });
    void wait.then(done);
  });
}

function describeFailure(error: unknown, timeoutMs: number): string {
  const e = error as Error & { cause?: Error & { code?: string } };
  if (e?.name === 'TimeoutError') return `no complete answer within ${timeoutMs} ms`;
  const cause = e?.cause instanceof Error ? e.cause : undefined;
  const detail = cause ? `${cause.message}${cause.code ? ` (${cause.code})` : ''}` : String(e?.message ?? error);
  return `connection failed: ${redact(detail)}`;
}

/** Turns an answer into its JSON body, or the error it means. */
function interpret(response: Response, text: string, label: string): unknown {
  const { status } = response;
  let body: unknown;
  let json = true;
  try {
    body = text.length > 0 ? JSON.parse(text) : undefined;
  } catch {
    json = false;
  }
  const stated = statedError(body, json, text);
  // A business code is the service's answer whatever status carried it: never retried, never data.
  if (isBusinessCode(stated?.code)) {
    const message = `${label}: ${describeStated(stated)} (HTTP ${status})`;
    if (stated.code === 1005) throw new DataNotFoundError(message, label, status);
    throw new (stated.code === 1010 ? FieldsRequiredError : FatalSourceError)(message, label, status);
  }
  const said = stated ? ` ${describeStated(stated)}` : describeBody(json, text);
  if (status === 429 || status === 408 || status >= 500) {
    throw new RetriableSourceError(
      `${label}: HTTP ${status}${said}`,
      label,
      status,
      parseRetryAfter(response.headers.get('retry-after')),
    );
  }
  if (status === 401 || status === 403)
    throw new AuthenticationError(
      `${label}: HTTP ${status} not authorized (check source.auth and LOYALTY_API_TOKEN)`,
      label,
      status,
    );
  if (status >= 300 && status < 400)
    throw new FatalSourceError(
      `${label}: HTTP ${status} redirect, not followed (set source.base_url to the address it points to)`,
      label,
      status,
    );
  if (status >= 400 || status < 200) throw new FatalSourceError(`${label}: HTTP ${status}${said}`, label, status);
  if (!json)
    throw new RetriableSourceError(
      `${label}: response body is not complete JSON (${Buffer.byteLength(text)} bytes)`,
      label,
      status,
    );
  if (body === undefined) throw new RetriableSourceError(`${label}: empty response body`, label, status);
  if (stated) throw new FatalSourceError(`${label}: error body${said} in an HTTP ${status} answer`, label, status);
  return body;
}

/** What a body that is not JSON said, short and on one line; secrets are removed before anything is cut. */
function describeBody(json: boolean, text: string): string {
  if (!json && text.trim() !== '') return ` (not JSON: ${redact(text).replace(/\s+/g, ' ').trim().slice(0, 80)})`;
  return '';
}

function parseRetryAfter(value: string | null): number | undefined {
  if (!value) return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds) && seconds >= 0) return seconds;
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, (at - Date.now()) / 1000);
}

export { SourceError };
