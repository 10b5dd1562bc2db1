import { readFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from '../log/logger.js';

/** Options of {@link serveReport}. */
export interface ReportServerOptions {
  /** The page file: read from disk at every request, so whoever rewrites it (this server, `run --report`) is served. */
  file: string;
  host: string;
  /** 0 picks a free port. */
  port: number;
  /** Seconds between two rewrites of the page. */
  everySeconds: number;
  /** Rewrites the page from the warehouse. */
  refresh: () => Promise<void>;
  logger: Logger;
}

/** A running page server. */
export interface ReportServer {
  url: string;
  /** Stops rewriting and serving; waits for a rewrite under way. */
  close(): Promise<void>;
}

/**
 * Serves the page at `/` (and `GET /health`), and rewrites it every `everySeconds` seconds. A rewrite that fails
 * (a DuckDB warehouse held by a run at that moment, a database down) is logged and the last page stays served.
 */
export async function serveReport(options: ReportServerOptions): Promise<ReportServer> {
  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { allow: 'GET, HEAD' }).end();
    } else if (path === '/health') {
      res.writeHead(200, { 'content-type': 'text/plain' }).end('ok\n');
    } else if (path === '/' || path === '/index.html') {
      readFile(options.file).then(
        (page) => res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' }).end(req.method === 'HEAD' ? undefined : page),
        () => res.writeHead(503, { 'content-type': 'text/plain', 'retry-after': String(options.everySeconds) }).end('the page is not written yet\n'),
      );
    } else {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found\n');
    }
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> = Promise.resolve();
  let closed = false;
  const schedule = () => {
    if (closed) return;
    timer = setTimeout(() => {
      running = options.refresh().then(
        () => options.logger.debug({ file: options.file }, 'report rewritten'),
        (error: unknown) => options.logger.warn({ err: error, file: options.file }, 'report not rewritten; the last page stays'),
      );
      void running.then(schedule);
    }, options.everySeconds * 1000);
  };
  schedule();
  const host = options.host.includes(':') ? `[${options.host}]` : options.host;
  return {
    url: `http://${host}:${port}/`,
    async close() {
      closed = true;
      clearTimeout(timer);
      await running;
      const done = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      await done;
    },
  };
}
