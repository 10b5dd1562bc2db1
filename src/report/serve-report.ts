import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type OutgoingHttpHeaders } from 'node:http';
import { type AddressInfo, isIP } from 'node:net';
import { hostname } from 'node:os';
import type { Logger } from '../log/logger.js';
import { PAGE_SCRIPT } from './page-script.js';

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
  /** Host names (and addresses) the page may be asked for by, besides those of {@link ownHostNames}. */
  allowedHosts?: readonly string[];
  /** The job's metrics, read from the warehouse at each request of `/metrics` (none: 404), in OpenMetrics when asked. */
  metrics?: (openMetrics: boolean) => Promise<{ contentType: string; text: string }>;
}

/**
 * The names a request's `Host` may carry by default: the loopback names, the machine's own name, and the address
 * served on unless it is a wildcard. A page answered only under the names it is served by cannot be read by
 * another site through DNS rebinding (a name of the attacker's made to point at this address).
 */
export function ownHostNames(host: string): string[] {
  const names = ['localhost', '127.0.0.1', '::1', hostname()];
  if (host !== '0.0.0.0' && host !== '::' && host !== '') names.push(host);
  return names.map(normalHost);
}

/** Whether `host` is served to this machine only. */
export function isLoopback(host: string): boolean {
  const h = normalHost(host);
  return h === 'localhost' || h === '::1' || /^127\./.test(h) || h === '::ffff:127.0.0.1';
}

/** A host name or address as compared: lower case, without brackets or trailing dot. */
function normalHost(host: string): string {
  return host
    .trim()
    .toLowerCase()
    .replace(/^\[(.*)\]$/, '$1')
    .replace(/\.$/, '');
}

/** The name a request's `Host` header gives, without its port. */
function requestHost(req: IncomingMessage): string | undefined {
  const header = req.headers.host;
  if (!header) return undefined;
  const bracketed = /^\[([^\]]+)\](?::\d+)?$/.exec(header);
  if (bracketed) return normalHost(bracketed[1]!);
  if (isIP(header) === 6) return normalHost(header);
  return normalHost(header.replace(/:\d+$/, ''));
}

/**
 * Headers of every answer: the page runs its one script (by hash) and its inline style, loads nothing, is framed
 * by no one, and sends no referrer; the browser takes each answer for the type it says.
 */
export const SECURITY_HEADERS: OutgoingHttpHeaders = {
  'content-security-policy': [
    "default-src 'none'",
    `script-src 'sha256-${createHash('sha256').update(PAGE_SCRIPT).digest('base64')}'`,
    "style-src 'unsafe-inline'",
    'img-src data:',
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join('; '),
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
};

/** A running page server. */
export interface ReportServer {
  url: string;
  /** Stops rewriting and serving; waits for a rewrite under way. */
  close(): Promise<void>;
}

/**
 * Serves the page at `/` (and `GET /health`, and the job's metrics at `/metrics`), and rewrites it every `everySeconds` seconds. A rewrite that fails
 * (a DuckDB warehouse held by a run at that moment, a database down) is logged and the last page stays served.
 * A request whose `Host` is none of the server's names ({@link ownHostNames}, `allowedHosts`) gets 421, and every
 * answer carries {@link SECURITY_HEADERS}.
 */
export async function serveReport(options: ReportServerOptions): Promise<ReportServer> {
  const allowed = new Set([...ownHostNames(options.host), ...(options.allowedHosts ?? []).map(normalHost)]);
  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    const send = (status: number, headers: OutgoingHttpHeaders, body?: string | Buffer) =>
      res.writeHead(status, { ...SECURITY_HEADERS, ...headers }).end(body);
    const host = requestHost(req);
    if (host === undefined || !allowed.has(host)) {
      options.logger.warn(
        { host: req.headers.host ?? null, path },
        'status page asked for under a host name not its own: refused (--allowed-host adds one)',
      );
      send(421, { 'content-type': 'text/plain', connection: 'close' }, 'this server does not serve that host name\n');
    } else if (req.method !== 'GET' && req.method !== 'HEAD') {
      send(405, { allow: 'GET, HEAD' });
    } else if (path === '/metrics' && options.metrics) {
      // OpenMetrics for a scraper that asks for it (Prometheus does), else Prometheus' text format
      options.metrics(/application\/openmetrics-text/.test(req.headers.accept ?? '')).then(
        ({ contentType, text }) =>
          send(
            200,
            { 'content-type': contentType, 'cache-control': 'no-store' },
            req.method === 'HEAD' ? undefined : text,
          ),
        (error: unknown) => {
          // a DuckDB warehouse a run holds cannot be read now: the scrape fails, and the next one reads it
          options.logger.warn({ err: error }, 'metrics not read from the warehouse');
          send(503, { 'content-type': 'text/plain', 'retry-after': '10' }, 'the warehouse cannot be read now\n');
        },
      );
    } else if (path === '/health') {
      send(200, { 'content-type': 'text/plain' }, 'ok\n');
    } else if (path === '/' || path === '/index.html') {
      readFile(options.file).then(
        (page) =>
          send(
            200,
            { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' },
            req.method === 'HEAD' ? undefined : page,
          ),
        () =>
          send(
            503,
            { 'content-type': 'text/plain', 'retry-after': String(options.everySeconds) },
            'the page is not written yet\n',
          ),
      );
    } else {
      send(404, { 'content-type': 'text/plain' }, 'not found\n');
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
        (error: unknown) =>
          options.logger.warn({ err: error, file: options.file }, 'report not rewritten; the last page stays'),
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
