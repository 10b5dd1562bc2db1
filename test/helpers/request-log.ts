import type { Middleware } from '../../src/emulator/index.js';
import type { startCli } from './cli.js';

/** Every request the emulator served, with the window (`start`) of export requests: a per-window request count. */
export class RequestLog {
  readonly entries: Array<{ path: string; start: string | null }> = [];

  /** Emulator middleware that records each request before it is answered. */
  readonly middleware: Middleware = (request, next) => {
    this.entries.push({ path: request.path, start: request.query.get('start') });
    return next(request);
  };

  /** Requests per window start to paths beginning with `pathPrefix`. */
  perWindow(pathPrefix: string): Map<string, number> {
    const out = new Map<string, number>();
    for (const e of this.entries)
      if (e.path.startsWith(pathPrefix) && e.start !== null) out.set(e.start, (out.get(e.start) ?? 0) + 1);
    return out;
  }

  count(pathPrefix: string): number {
    return this.entries.filter((e) => e.path.startsWith(pathPrefix)).length;
  }

  clear(): void {
    this.entries.length = 0;
  }
}

/** Waits until the CLI has logged `count` lines matching `pattern`, then kills it with SIGKILL. */
export async function killAfter(cli: ReturnType<typeof startCli>, pattern: RegExp, count: number): Promise<void> {
  const global = new RegExp(pattern.source, 'g');
  await new Promise<void>((resolve, reject) => {
    const timer = setInterval(() => {
      if ((cli.output().match(global) ?? []).length >= count) {
        clearInterval(timer);
        cli.child.kill('SIGKILL');
        resolve();
      }
    }, 5);
    void cli.done.then(() => {
      clearInterval(timer);
      reject(new Error(`finished before it could be killed: ${cli.output().slice(-800)}`));
    });
  });
  await cli.done;
}
