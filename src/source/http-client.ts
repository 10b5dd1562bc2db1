import pLimit, { type LimitFunction } from 'p-limit';
import type { Logger } from '../log/logger.js';
import { DataNotFoundError, FatalSourceError, RetriableSourceError, SourceError } from './source-errors.js';
import { RateLimiter } from './rate-limiter.js';

/** Counts the requests of one piece of work (a span) on a client shared by many. */
export interface RequestCounter {
  requests: number;
}

export interface HttpClientOptions {
  baseUrl: string;
  auth?: { header: string; value: string };
  timeoutMs: number;
  retries: number;
  requestsPerSecond: number;
  concurrency: number;
  logger: Logger;
  /** First backoff delay; doubles each attempt, with full jitter. */
  backoffBaseMs?: number;
  /** Ceiling of one backoff delay. */
  backoffMaxMs?: number;
}

/**
 * GETs and POSTs JSON from the source: one place for the auth header, the time-out, the shared rate limit,
 * the concurrency cap and retries with exponential backoff. Every request is counted.
 */
export class HttpClient {
  private readonly limiter: RateLimiter;
  private readonly gate: LimitFunction;
  private requests = 0;

  constructor(private readonly options: HttpClientOptions) {
    this.limiter = new RateLimiter(options.requestsPerSecond);
    this.gate = pLimit(options.concurrency);
  }

  /** Requests sent so far, retries included. */
  get requestCount(): number {
    return this.requests;
  }

  /** GET `path` with `query`; resolves to the parsed JSON body. `counter.requests` counts attempts. */
  get(path: string, query: Record<string, string | number | boolean>, label = path, counter?: RequestCounter): Promise<unknown> {
    const url = new URL(this.options.baseUrl + path);
    for (const [k, v] of Object.entries(query)) url.searchParams.set(k, String(v));
    return this.gate(() => this.withRetries(url, { method: 'GET' }, label, counter));
  }

  /** POST a JSON body to `path`. */
  post(path: string, body: unknown, label = path, counter?: RequestCounter): Promise<unknown> {
    const url = new URL(this.options.baseUrl + path);
    const init = { method: 'POST', body: JSON.stringify(body), headers: { 'content-type': 'application/json' } };
    return this.gate(() => this.withRetries(url, init, label, counter));
  }

  private async withRetries(url: URL, init: RequestInit, label: string, counter?: RequestCounter): Promise<unknown> {
    const { retries, backoffBaseMs = 200, backoffMaxMs = 30_000 } = this.options;
    for (let attempt = 0; ; attempt++) {
      try {
        if (counter) counter.requests++;
        return await this.once(url, init, label);
      } catch (error) {
        if (!(error instanceof RetriableSourceError) || attempt >= retries) throw error;
        const backoff = Math.random() * Math.min(backoffMaxMs, backoffBaseMs * 2 ** attempt);
        const wait = error.retryAfterSeconds !== undefined ? Math.min(error.retryAfterSeconds * 1000, 120_000) : backoff;
        this.options.logger.warn({ endpoint: label, attempt: attempt + 1, waitMs: Math.round(wait), reason: error.message }, 'retrying source request');
        await new Promise((r) => setTimeout(r, wait));
      }
    }
  }

  private async once(url: URL, init: RequestInit, label: string): Promise<unknown> {
    await this.limiter.take();
    this.requests++;
    const headers = new Headers(init.headers);
    headers.set('accept', 'application/json');
    if (this.options.auth) headers.set(this.options.auth.header, this.options.auth.value);
    let response: Response;
    let text: string;
    try {
      response = await fetch(url, { ...init, headers, signal: AbortSignal.timeout(this.options.timeoutMs) });
      text = await response.text();
    } catch (error) {
      const e = error as Error;
      const reason = e.name === 'TimeoutError' ? `timed out after ${this.options.timeoutMs} ms` : `network error: ${e.cause instanceof Error ? e.cause.message : e.message}`;
      throw new RetriableSourceError(`${label}: ${reason}`, label);
    }
    return interpret(response, text, label);
  }
}

function interpret(response: Response, text: string, label: string): unknown {
  const { status } = response;
  let body: unknown;
  try {
    body = text.length > 0 ? JSON.parse(text) : undefined;
  } catch {
    if (status >= 200 && status < 300) throw new RetriableSourceError(`${label}: response body is not complete JSON (${text.length} bytes)`, label, status);
  }
  const code = errorCode(body);
  if (code === 1005) throw new DataNotFoundError(`${label}: 1005 Data Not Found`, label, status);
  if (status === 429 || status >= 500) {
    const retryAfter = parseRetryAfter(response.headers.get('retry-after'));
    throw new RetriableSourceError(`${label}: HTTP ${status}${describeBody(body)}`, label, status, retryAfter);
  }
  if (status === 401 || status === 403) throw new FatalSourceError(`${label}: HTTP ${status} not authorized (check source.auth and LOYALTY_API_TOKEN)`, label, status);
  if (status >= 400 || code !== undefined) throw new FatalSourceError(`${label}: HTTP ${status}${describeBody(body)}`, label, status);
  if (body === undefined) throw new RetriableSourceError(`${label}: empty response body`, label, status);
  return body;
}

function errorCode(body: unknown): number | undefined {
  if (body && typeof body === 'object' && !Array.isArray(body) && 'code' in body && !('data' in body)) {
    const code = Number((body as { code: unknown }).code);
    return Number.isFinite(code) ? code : undefined;
  }
  return undefined;
}

function describeBody(body: unknown): string {
  if (body && typeof body === 'object' && 'message' in body) return ` ${String((body as { code?: unknown }).code ?? '')} ${String((body as { message: unknown }).message).slice(0, 200)}`.replace(/\s+/g, ' ');
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
