import type { RawAnswer } from '../source/http-client.js';
import { ACCOUNT_MEMBERS } from '../streams/accounts.js';
import { LOYALTY_MEMBERS } from '../streams/loyalty-status.js';
import { POSTING_MEMBERS } from '../streams/loyalty-postings.js';
import { ANSWER_MEMBERS, ELEMENT_MEMBERS } from '../streams/surveys.js';
import { VOUCHER_MEMBERS } from '../streams/vouchers.js';

/** An answer read as a page of a listing, or why it is none. */
export type Page =
  | { ok: true; pageNumber: number; pageSize: number; totalCount: number; data: unknown[] }
  | { ok: false; answer: RawAnswer };

/** The members the spec lists, per record type: what the probe compares the records it saw with. */
export const LISTED = new Map<string, ReadonlySet<string>>([
  ['account', ACCOUNT_MEMBERS],
  ['survey answer', new Set([...ELEMENT_MEMBERS, ...[...ANSWER_MEMBERS].map((m) => `answers[].${m}`)])],
  ['posting', POSTING_MEMBERS],
  ['loyalty', LOYALTY_MEMBERS],
  ['voucher', VOUCHER_MEMBERS],
]);

/**
 * How many records a page of `size` was served: null when as many as asked (or the rest of the listing); the cap
 * when fewer came than the listing holds, or the answer's `pageSize` says fewer than it served room for; `one page`
 * when the whole listing fit and `pageSize` says its length (a cap, or a last page naming its own length).
 */
export function capOf(page: Page & { ok: true }, size: number): number | 'one page' | null {
  if (page.data.length < size && page.data.length < page.totalCount) return page.data.length;
  if (page.pageSize >= size) return null;
  return page.pageSize === page.data.length ? 'one page' : page.pageSize;
}

/** An answer's body as JSON, or undefined when it is none. */
export function json(answer: RawAnswer): unknown {
  try {
    return JSON.parse(answer.text);
  } catch {
    return undefined;
  }
}

/** An answer in a line: its status, content type and body, cut short. */
export function describeAnswer(answer: RawAnswer): string {
  const body = answer.text.replace(/\s+/g, ' ').trim().slice(0, 120);
  return `HTTP ${answer.status}${answer.contentType ? ` (${answer.contentType.split(';')[0]})` : ''}, body ${body === '' ? '(empty)' : body}`;
}
