import type { IncomingHttpHeaders } from 'node:http';

/** An incoming request, as route handlers and middleware see it. */
export interface EmulatorRequest {
  readonly method: string;
  /** Decoded path without the query string, e.g. `/business-data/accounts`. */
  readonly path: string;
  readonly query: URLSearchParams;
  /** Node's headers: names lower-cased. */
  readonly headers: IncomingHttpHeaders;
  /** 1 for the first request the emulator served, then 2, 3, … (never reset). */
  readonly sequence: number;
  /** The request body as text (read once, then cached). */
  readBody(): Promise<string>;
  /** Aborted when the client goes away before the response is complete (a hung request ends with it). */
  readonly signal: AbortSignal;
}

/** A response before it is written. */
export interface EmulatorResponse {
  status: number;
  headers: Record<string, string>;
  /**
   * The whole body, or chunks streamed with backpressure. When a chunk iterator throws, the connection
   * is cut mid-body, which is how a fault layer can serve a truncated response.
   */
  body: string | AsyncIterable<string>;
}

/** Produces the response of a request. A handler that rejects makes the server reset the connection. */
export type RequestHandler = (request: EmulatorRequest) => Promise<EmulatorResponse>;

/**
 * A step around the route handlers: it may answer by itself (401, an injected 503 or 429), delay, never
 * answer (a hang), or call `next` and alter what comes back (e.g. cut the body short).
 *
 * @example const slow: Middleware = async (req, next) => { await sleep(50); return next(req); };
 */
export type Middleware = (request: EmulatorRequest, next: RequestHandler) => Promise<EmulatorResponse>;

/** Chains middleware (first = outermost) in front of a handler. */
export function composePipeline(middleware: readonly Middleware[], handler: RequestHandler): RequestHandler {
  return middleware.reduceRight<RequestHandler>((next, step) => (request) => step(request, next), handler);
}
