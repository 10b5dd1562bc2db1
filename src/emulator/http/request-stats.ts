import type { Middleware } from './request-pipeline.js';

/** Requests served, counted per path (query string excluded). */
export class RequestStats {
  private readonly counts = new Map<string, number>();

  /** Counts one request to `path`. */
  record(path: string): void {
    this.counts.set(path, (this.counts.get(path) ?? 0) + 1);
  }

  /** Requests whose path starts with `pathPrefix` (all requests when omitted). */
  requests(pathPrefix = ''): number {
    let total = 0;
    for (const [path, count] of this.counts) if (path.startsWith(pathPrefix)) total += count;
    return total;
  }

  /** Forgets every count. */
  reset(): void {
    this.counts.clear();
  }

  /** Counts per path, sorted by path. */
  snapshot(): Record<string, number> {
    return Object.fromEntries([...this.counts].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  }

  /** Middleware that counts every request, whatever its outcome. */
  middleware(): Middleware {
    return (request, next) => {
      this.record(request.path);
      return next(request);
    };
  }
}
