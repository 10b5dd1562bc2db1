import type { EmulatorRequest, EmulatorResponse, RequestHandler } from './request-pipeline.js';
import { ApiError, SourceError, errorResponse as defaultErrorResponse } from './responses.js';

/** One endpoint. */
export interface Route {
  method: 'GET' | 'POST' | 'PUT';
  /** An exact path, or a pattern whose capture groups are passed to `handle`. */
  path: string | RegExp;
  handle(request: EmulatorRequest, params: string[]): EmulatorResponse | Promise<EmulatorResponse>;
}

/**
 * Dispatches to the first route matching method and path: 404 for an unknown path, 405 for a known path
 * with another method. An {@link ApiError} becomes its error body; anything else a 500.
 */
export function createRouter(
  routes: readonly Route[],
  errorResponse: (error: ApiError) => EmulatorResponse = defaultErrorResponse,
): RequestHandler {
  return async (request) => {
    let pathKnown = false;
    for (const route of routes) {
      const params = matchPath(route.path, request.path);
      if (!params) continue;
      pathKnown = true;
      if (route.method !== request.method) continue;
      try {
        return await route.handle(request, params);
      } catch (error) {
        if (error instanceof ApiError) return errorResponse(error);
        process.stderr.write(
          `${JSON.stringify({ emulator: 'internal error', path: request.path, error: String(error) })}\n`,
        );
        return errorResponse(SourceError.internal());
      }
    }
    return errorResponse(pathKnown ? SourceError.methodNotAllowed() : SourceError.notFound());
  };
}

function matchPath(pattern: string | RegExp, path: string): string[] | null {
  if (typeof pattern === 'string') return pattern === path ? [] : null;
  const match = pattern.exec(path);
  return match ? match.slice(1).map((group) => group ?? '') : null;
}
