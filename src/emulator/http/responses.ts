import type { EmulatorResponse } from './request-pipeline.js';

/** A failure answered with the source's error body `{ code, message }`. */
export class ApiError extends Error {
  constructor(
    /** HTTP status. */
    readonly status: number,
    /** The source's error code: a 1xxx business code or the HTTP status itself. */
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}

/** The errors the emulated source answers with, and their HTTP statuses. */
export const SourceError = {
  fieldsEmpty: (fields: string) => new ApiError(400, 1002, `Fields are empty: ${fields}`),
  notUnique: (field: string) => new ApiError(409, 1004, `The following field is not unique: ${field}`),
  dataNotFound: () => new ApiError(404, 1005, 'Data Not Found'),
  invalidFields: (fields: string) => new ApiError(400, 1006, `The following fields are invalid: ${fields}`),
  atLeastOneRequired: (fields: string) =>
    new ApiError(400, 1010, `At least one of the following fields is required: ${fields}`),
  badRequest: (message: string) => new ApiError(400, 400, message),
  notAuthorized: () => new ApiError(401, 401, 'Not authorized'),
  notFound: () => new ApiError(404, 404, 'Not Found'),
  methodNotAllowed: () => new ApiError(405, 405, 'Method Not Allowed'),
  internal: () => new ApiError(500, 500, 'Internal server error'),
} as const;

/** A JSON response. */
export function json(status: number, body: unknown): EmulatorResponse {
  return { status, headers: { 'content-type': 'application/json; charset=utf-8' }, body: JSON.stringify(body) };
}

/** The response of an error. */
export function errorResponse(error: ApiError): EmulatorResponse {
  return json(error.status, { code: error.code, message: error.message });
}

const CHUNK_CHARS = 64 * 1024;

/**
 * Newline-delimited JSON streamed in ~64 KB chunks, generated while being sent (never held whole), and
 * yielding to the event loop between chunks so a long dump does not stall other requests.
 */
export function ndjson(rows: Iterable<unknown>): EmulatorResponse {
  async function* chunks(): AsyncGenerator<string> {
    let chunk = '';
    for (const row of rows) {
      chunk += `${JSON.stringify(row)}\n`;
      if (chunk.length >= CHUNK_CHARS) {
        yield chunk;
        chunk = '';
        await new Promise((resolve) => setImmediate(resolve));
      }
    }
    if (chunk) yield chunk;
  }
  return { status: 200, headers: { 'content-type': 'application/x-ndjson; charset=utf-8' }, body: chunks() };
}
