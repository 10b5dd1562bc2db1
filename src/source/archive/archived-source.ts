import { interpretAnswer, type RequestCounter, type SourceAnswer } from '../http-client.js';
import type { SourceClient } from '../loyalty-api.js';
import { CancelledRequestError, FatalSourceError } from '../source-errors.js';
import type { ArchivedSpan } from './answer-archive.js';

/**
 * A source that answers from one archived span instead of the service: each request gets the answer kept for the
 * same endpoint and parameters, read the way a live answer is (`interpretAnswer`: a kept `1005` is still "no
 * data"). A request asked more than once in the span (a window read again) gets its answers in the order they
 * came, then the last one again; each answer served is handed to the request's `keep` hook as a live one is
 * (its arrival instant is what a state observation records). A request the span never asked is a {@link FatalSourceError}: a replay asks
 * exactly what the load it replays asked, and nothing reaches the service.
 */
export class ArchivedSource implements SourceClient {
  private readonly answers = new Map<string, SourceAnswer[]>();
  private readonly served = new Map<string, number>();
  readonly requestCount = 0;

  constructor(span: ArchivedSpan) {
    for (const answer of span.answers) {
      const key = requestKey(answer.path, answer.query);
      const list = this.answers.get(key);
      if (list) list.push(answer);
      else this.answers.set(key, [answer]);
    }
  }

  setRequestsPerSecond(): void {}

  get(
    path: string,
    query: Record<string, string | number | boolean>,
    label = path,
    counter?: RequestCounter,
  ): Promise<unknown> {
    if (counter?.signal?.aborted) return Promise.reject(new CancelledRequestError(`${label}: called off`, label));
    const asked = new Map<string, string>();
    for (const [k, v] of Object.entries(query)) asked.set(k, String(v));
    const key = requestKey(path, Object.fromEntries(asked));
    const list = this.answers.get(key);
    if (!list)
      return Promise.reject(
        new FatalSourceError(`${label}: not in the archive (the load replayed never asked it)`, label),
      );
    const n = this.served.get(key) ?? 0;
    this.served.set(key, n + 1);
    const answer = list[Math.min(n, list.length - 1)]!;
    counter?.keep?.(answer);
    try {
      return Promise.resolve(interpretAnswer(answer.status, answer.body, label));
    } catch (error) {
      return Promise.reject(error as Error);
    }
  }
}

/** A request's key: its path and its parameters in name order (never a credential: those travel in headers). */
function requestKey(path: string, query: Record<string, string>): string {
  const params = new URLSearchParams(Object.entries(query).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  return `${path}?${params.toString()}`;
}
