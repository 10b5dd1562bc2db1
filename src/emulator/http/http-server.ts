import { type IncomingMessage, type Server, type ServerResponse, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { EmulatorRequest, EmulatorResponse, RequestHandler } from './request-pipeline.js';

const MAX_BODY_BYTES = 1 << 20;

/** A listening server. */
export interface ListeningServer {
  port: number;
  close(): Promise<void>;
}

/** Serves `handler` over HTTP on host:port (port 0 picks a free one). */
export async function listen(handler: RequestHandler, host: string, port: number): Promise<ListeningServer> {
  let sequence = 0;
  const server: Server = createServer((req, res) => {
    void serve(handler, toRequest(req, res, ++sequence), res);
  });
  server.keepAliveTimeout = 30_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        server.closeAllConnections();
      }),
  };
}

function toRequest(req: IncomingMessage, res: ServerResponse, sequence: number): EmulatorRequest {
  const gone = new AbortController();
  res.once('close', () => {
    if (!res.writableFinished) gone.abort();
  });
  const url = new URL(req.url ?? '/', 'http://emulator');
  let body: Promise<string> | undefined;
  let path = url.pathname;
  try {
    path = decodeURIComponent(path);
  } catch {
    // A malformed escape stays as sent; it then simply matches no route.
  }
  return {
    method: req.method ?? 'GET',
    path,
    query: url.searchParams,
    headers: req.headers,
    sequence,
    readBody: () => (body ??= readBody(req)),
    signal: gone.signal,
  };
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) req.destroy(new Error('request body too large'));
      else chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

async function serve(handler: RequestHandler, request: EmulatorRequest, res: ServerResponse): Promise<void> {
  let response: EmulatorResponse;
  try {
    response = await handler(request);
  } catch {
    res.destroy();
    return;
  }
  if (typeof response.body === 'string') {
    res.writeHead(response.status, { ...response.headers, 'content-length': Buffer.byteLength(response.body) });
    res.end(response.body);
    return;
  }
  res.writeHead(response.status, response.headers);
  try {
    for await (const chunk of response.body) {
      if (res.destroyed) return;
      if (!res.write(chunk)) await drained(res);
    }
    res.end();
  } catch {
    res.destroy(); // the body was cut short: the client sees a truncated response
  }
}

function drained(res: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.on('drain', done);
    res.on('close', done);
  });
}
