import { redact } from '../log/redact.js';

/** An error the source stated in an answer's body, whatever shape it gave it. */
export interface StatedError {
  /** The code it gave (a 1xxx business code, or an HTTP status), or undefined when it gave none. */
  code: number | undefined;
  /** Its message, one line, secrets removed; '' when it gave none. */
  message: string;
}

/** What each of the spec's 1xxx codes means (spec, "Errors"). */
const MEANINGS: ReadonlyMap<number, string> = new Map([
  [1002, 'Fields are empty'],
  [1004, 'The following field is not unique'],
  [1005, 'Data Not Found'],
  [1006, 'The following fields are invalid'],
  [1010, 'At least one of the following fields is required'],
]);

/** Whether `code` is one of the service's business codes (1xxx) rather than an HTTP status. */
export function isBusinessCode(code: number | undefined): code is number {
  return code !== undefined && code >= 1000 && code <= 1999;
}

/**
 * The error an answer's body states, or undefined for a body that states none (data). The spec does not show the
 * shape of an error body; these are recognised, the code a JSON number or digits:
 * - `{"code": 1005, "message": "…"}` (an object without `data`),
 * - `{"error": {"code": 1005, "message": "…"}}`,
 * - `{"status": "error", "errorCode": "1005", "errorMessage": "…"}` (`errorCode` alone, without `data`, too),
 * - text such as `1005 Data Not Found` (a body that is not JSON and starts with a 1xxx code).
 *
 * @example statedError(undefined, false, '1005 Data Not Found') // { code: 1005, message: 'Data Not Found' }
 */
export function statedError(body: unknown, json: boolean, text: string): StatedError | undefined {
  if (!json) {
    const match = /^\s*(1\d{3})\b[\s:,-]*([^]*)$/.exec(text);
    return match ? { code: Number(match[1]), message: oneLine(match[2]!) } : undefined;
  }
  if (!body || typeof body !== 'object' || Array.isArray(body)) return undefined;
  const record = body as Record<string, unknown>;
  if ('data' in record) return undefined;
  const nested = record.error;
  if (nested && typeof nested === 'object' && !Array.isArray(nested) && 'code' in nested) {
    const inner = nested as Record<string, unknown>;
    return { code: codeOf(inner.code), message: oneLine(inner.message) };
  }
  if ('code' in record) return { code: codeOf(record.code), message: oneLine(record.message ?? record.error) };
  if ('errorCode' in record || record.status === 'error')
    return { code: codeOf(record.errorCode), message: oneLine(record.errorMessage ?? record.message) };
  return undefined;
}

/**
 * A stated error in words: its code, what the spec says the code means, and the service's own message when it
 * says more, e.g. `1005 Data Not Found` or `1006 The following fields are invalid: start`.
 */
export function describeStated(error: StatedError): string {
  const meaning = error.code === undefined ? undefined : MEANINGS.get(error.code);
  const head = error.code === undefined ? 'error' : String(error.code);
  if (!meaning) return error.message ? `${head} ${error.message}` : head;
  if (error.message === '' || error.message.toLowerCase().startsWith(meaning.toLowerCase()))
    return `${head} ${error.message || meaning}`;
  return `${head} ${meaning}: ${error.message}`;
}

function codeOf(value: unknown): number | undefined {
  if (typeof value === 'number' && Number.isInteger(value)) return value;
  if (typeof value === 'string' && /^\s*\d+\s*$/.test(value)) return Number(value);
  return undefined;
}

/** A message on one line, secrets removed before it is cut to 200 characters. */
function oneLine(value: unknown): string {
  if (value === undefined || value === null) return '';
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  return redact(text).replace(/\s+/g, ' ').trim().slice(0, 200);
}
