import type { Middleware } from '../../src/emulator/index.js';
import type { startCli } from './cli.js';

/** Holds the emulator's export requests while closed: a run stays in the middle of its work for as long as a test needs. */
export class RequestGate {
  private open = Promise.resolve();
  private release = () => {};
  readonly middleware: Middleware = async (request, next) => {
    if (request.path.startsWith('/business-data/')) await this.open;
    return next(request);
  };

  close(): void {
    this.open = new Promise((resolve) => (this.release = resolve));
  }

  openUp(): void {
    this.release();
  }
}

/** Resolves once the CLI has written `pattern` (stdout or stderr); rejects if it ends first. */
export function waitForOutput(cli: ReturnType<typeof startCli>, pattern: RegExp): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setInterval(() => {
      if (pattern.test(cli.output())) {
        clearInterval(timer);
        resolve();
      }
    }, 10);
    void cli.done.then(() => {
      clearInterval(timer);
      if (pattern.test(cli.output())) resolve();
      else reject(new Error(`ended before writing ${pattern}: ${cli.output().slice(-800)}`));
    });
  });
}
