import { interpretAnswer, type RequestCounter, type SourceAnswer } from '../http-client.js';
import type { SourceClient } from '../loyalty-api.js';
import { CancelledRequestError, FatalSourceError } from '../source-errors.js';
import { spanAnswers, type ArchivedSpan } from './answer-archive.js';

/**
 * A source that answers from one archived span instead of the service: each request gets the answer kept for the
 * same endpoint and parameters, read the way a live answer is (`interpretAnswer`: a kept `1005` is still "no
 * data"). A request asked more than once in the span (a window read again) gets its answers in the order they
 * came, then the last one again; each answer served is handed to the request's `keep` hook as a live one is
 * (its arrival instant is what a state observation records). A request the span never asked is a {@link FatalSourceError}: a replay asks
 * exactly what the load it replays asked, and nothing reaches the service.
 *
 * Given a span's file, it reads the answers as they are asked, in the file's order: a replay asks what the load
 * asked, in nearly the order it asked, so only the answers read ahead of their request are held (those of
 * requests the load made at once), not the span's. An answer asked past those kept is found by reading the file
 * again (rare: a load asks each request as often as the one it replays).
 */
export class ArchivedSource implements SourceClient {
  private readonly waiting = new Map<string, SourceAnswer[]>();
  /** Requests served at least once. */
  private readonly asked = new Set<string>();
  private readonly answers: AsyncIterator<SourceAnswer>;
  private ended = false;
  private turn: Promise<unknown> = Promise.resolve();
  readonly requestCount = 0;

  constructor(private readonly span: ArchivedSpan | string) {
    this.answers = this.kept()[Symbol.asyncIterator]();
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
    // one request at a time reads the file on: the answers come out in its order
    const found = this.turn.then(() => this.find(key));
    this.turn = found.catch(() => undefined);
    return found.then((answer) => {
      if (!answer) throw new FatalSourceError(`${label}: not in the archive (the load replayed never asked it)`, label);
      counter?.keep?.(answer);
      return interpretAnswer(answer.status, answer.body, label);
    });
  }

  /** Stops reading the span's file (a load that ended before its last request). */
  async close(): Promise<void> {
    this.ended = true;
    await this.answers.return?.();
  }

  private async find(key: string): Promise<SourceAnswer | undefined> {
    const queue = this.waiting.get(key);
    if (queue) {
      this.asked.add(key);
      const answer = queue.shift()!;
      if (queue.length === 0) this.waiting.delete(key);
      return answer;
    }
    while (!this.ended) {
      const next = await this.answers.next();
      if (next.done) {
        this.ended = true;
        break;
      }
      const answer = next.value;
      const k = requestKey(answer.path, answer.query);
      if (k === key) {
        this.asked.add(key);
        return answer;
      }
      const list = this.waiting.get(k);
      if (list) list.push(answer);
      else this.waiting.set(k, [answer]);
    }
    if (!this.asked.has(key)) return undefined;
    // asked past its kept answers: the last one again
    let last: SourceAnswer | undefined;
    for await (const answer of this.kept()) if (requestKey(answer.path, answer.query) === key) last = answer;
    return last;
  }

  private async *kept(): AsyncIterable<SourceAnswer> {
    if (typeof this.span === 'string') yield* spanAnswers(this.span);
    else yield* this.span.answers;
  }
}

/** A request's key: its path and its parameters in name order (never a credential: those travel in headers). */
function requestKey(path: string, query: Record<string, string>): string {
  const params = new URLSearchParams(Object.entries(query).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  return `${path}?${params.toString()}`;
}
