import type { EmulatorResponse, Middleware } from './request-pipeline.js';
import { type ApiError, SourceError, errorResponse as defaultErrorResponse } from './responses.js';

/** Middleware answering 401 to every request without exactly `value` in header `header`. */
export function requireAuth(
  auth: { header: string; value: string },
  errorResponse: (error: ApiError) => EmulatorResponse = defaultErrorResponse,
): Middleware {
  const name = auth.header.toLowerCase();
  return async (request, next) =>
    request.headers[name] === auth.value ? next(request) : errorResponse(SourceError.notAuthorized());
}
