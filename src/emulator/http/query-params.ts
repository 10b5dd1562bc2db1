import { parseDay } from '../model/calendar.js';
import { SourceError } from './responses.js';

/** A required `YYYY-MM-DD` parameter. */
export function dayParam(query: URLSearchParams, name: string): string {
  const value = query.get(name);
  if (value === null || value === '') throw SourceError.badRequest(`${name} is required`);
  if (parseDay(value) === null) throw SourceError.badRequest(`${name} must be a date YYYY-MM-DD, got "${value}"`);
  return value;
}

/** A required integer parameter within [min, max]. */
export function intParam(query: URLSearchParams, name: string, min: number, max = Number.MAX_SAFE_INTEGER): number {
  const value = query.get(name);
  if (value === null || value === '') throw SourceError.badRequest(`${name} is required`);
  if (!/^-?\d+$/.test(value) || !Number.isSafeInteger(Number(value))) {
    throw SourceError.badRequest(`${name} must be an integer, got "${value}"`);
  }
  const number = Number(value);
  if (number < min || number > max) {
    throw SourceError.badRequest(
      max === Number.MAX_SAFE_INTEGER ? `${name} must be at least ${min}` : `${name} must be within ${min}..${max}`,
    );
  }
  return number;
}

/** An optional instant: epoch milliseconds or an ISO 8601 timestamp with its zone (`2024-12-01T00:00:00Z`); null when absent. */
export function instantParam(query: URLSearchParams, name: string): number | null {
  const value = query.get(name);
  if (value === null || value === '') return null;
  const ms = /^\d+$/.test(value)
    ? Number(value)
    : /^\d{4}-\d{2}-\d{2}T.*(Z|[+-]\d{2}:?\d{2})$/.test(value)
      ? Date.parse(value)
      : Number.NaN;
  if (!Number.isSafeInteger(ms))
    throw SourceError.badRequest(`${name} must be epoch milliseconds or an ISO timestamp with a zone, got "${value}"`);
  return ms;
}

/** A window of days with a page: the parameters of both business-data exports. */
export interface WindowPage {
  start: string;
  end: string;
  page: number;
  size: number;
}

/** `start`, `end` (inclusive days, start <= end), `page` (from 1) and `size` (1..maxPageSize). */
export function windowPageParams(query: URLSearchParams, maxPageSize: number): WindowPage {
  const { start, end } = dayRangeParams(query);
  return { start, end, page: intParam(query, 'page', 1), size: intParam(query, 'size', 1, maxPageSize) };
}

/** `start` and `end`, both inclusive days, start <= end. */
export function dayRangeParams(query: URLSearchParams): { start: string; end: string } {
  const start = dayParam(query, 'start');
  const end = dayParam(query, 'end');
  if (start > end) throw SourceError.badRequest(`start ${start} is after end ${end}`);
  return { start, end };
}

/** Non-empty `phone` and `email` parameters, or null for each one absent. */
export function identityParams(query: URLSearchParams): { phone: string | null; email: string | null } {
  return { phone: query.get('phone') || null, email: query.get('email') || null };
}
