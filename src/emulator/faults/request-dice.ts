import { type Random, Stream, randomFor } from '../model/random.js';
import type { EmulatorRequest } from '../http/request-pipeline.js';

/** FNV-1a over the UTF-16 code units of `text`: a stable 32-bit name for a request or a listing. */
export function hash32(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/** Method, path and the query with its parameters sorted: what makes two requests "the same request". */
export function requestKey(request: EmulatorRequest): string {
  const params = [...request.query].sort(([a, x], [b, y]) => (a < b ? -1 : a > b ? 1 : x < y ? -1 : x > y ? 1 : 0));
  return `${request.method} ${request.path}?${new URLSearchParams(params).toString()}`;
}

const BUCKETS = 1 << 20;

/**
 * The random generator of one request: a function of the fault seed, the request (method, path, query)
 * and how many times that same request was made before. So a client that asks the same things in the same
 * way meets the same faults, whatever the timing, and a retried request draws again.
 *
 * Occurrences are counted in a fixed table of 2^20 buckets (4 MB), so memory stays bounded however many
 * distinct requests are made; two requests sharing a bucket share their count, which keeps the draws
 * deterministic for a deterministic client.
 */
export class RequestDice {
  private readonly occurrences = new Uint32Array(BUCKETS);

  constructor(private readonly seed: number) {}

  /** The generator for this request, counting it as one more occurrence. */
  roll(request: EmulatorRequest): Random {
    const key = hash32(requestKey(request));
    const bucket = key & (BUCKETS - 1);
    const occurrence = this.occurrences[bucket]!;
    this.occurrences[bucket] = occurrence + 1;
    return randomFor(this.seed, Stream.faults, key, occurrence);
  }
}

/** The generator of a listing's drift (`n` = 0 decides whether it drifts, n >= 1 the n-th change). */
export function driftRandom(seed: number, listing: string, n: number): Random {
  return randomFor(seed, Stream.drift, hash32(listing), n);
}
