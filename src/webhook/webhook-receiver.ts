import { type IncomingMessage, type ServerResponse, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type Logger, silentLogger } from '../log/logger.js';
import { WebhookCalls, type ReceiverStats, type WebhookCallOptions } from './webhook-calls.js';

export type { ReceiverStats };

/** Options of {@link startWebhookReceiver}: who may call, where calls go ({@link WebhookCallOptions}), and where it listens. */
export interface WebhookReceiverOptions extends WebhookCallOptions {
  /** Interface to bind. Default `127.0.0.1`. */
  host?: string;
  /** Port; 0 (default) picks a free one. */
  port?: number;
  logger?: Logger;
}

/** A running receiver. */
export interface WebhookReceiver {
  /** Base URL, e.g. `http://127.0.0.1:8788`; calls go to `/hooks/<secret>` under it, or to `/hooks` with the secret header. */
  url: string;
  port: number;
  stats(): ReceiverStats;
  /** Stops accepting calls, lets those in progress finish, then closes the store. */
  close(): Promise<void>;
}

/**
 * Serves the loyalty webhook. A request is first let in or refused by its address, the call cap and its secret
 * ({@link WebhookGate}), before a byte of its body is read: 401 whatever was wrong (a receiver without a secret:
 * 404 outside `/hooks`), 429 with `Retry-After` over the cap. An admitted `POST` is a call: the body is validated
 * ({@link parseLoyaltyEvent}) and stored; the answer comes after the store committed it:
 * - 200 `{"status":"stored"}`, or `{"status":"duplicate"}` for a call already stored (a redelivery);
 * - 400 for a body that is not JSON or not a loyalty event (sending it again would not help);
 * - 413 for a body over `maxBodyBytes`;
 * - 503 with `Retry-After` when the warehouse cannot take it now: the sender's retry delivers it later.
 * `GET /health` answers 200; other methods 405.
 */
export async function startWebhookReceiver(options: WebhookReceiverOptions): Promise<WebhookReceiver> {
  const logger = options.logger ?? silentLogger;
  const calls = new WebhookCalls(options, logger);
  const onRequest = (req: IncomingMessage, res: ServerResponse) => {
    calls.handle(req, res).catch((error: unknown) => {
      logger.error({ err: error }, 'loyalty webhook call failed');
      // a 5xx only ever means "try again later": what fails here is not the body's doing (that is a 400)
      if (!res.headersSent)
        res
          .writeHead(503, {
            'content-type': 'application/json; charset=utf-8',
            'retry-after': String(options.retryAfterSeconds ?? 5),
          })
          .end('{"error":"internal error"}');
      else res.destroy();
    });
  };
  const server = createServer(onRequest);
  // Without this listener Node answers "100 Continue" itself, inviting the body of a call not yet let in.
  server.on('checkContinue', onRequest);
  // A caller that trickles its headers or body holds a socket: give up on it well before Node's 5-minute default.
  server.headersTimeout = 10_000;
  server.requestTimeout = 30_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  const host = options.host ?? '127.0.0.1';
  return {
    url: `http://${host.includes(':') ? `[${host}]` : host}:${port}`,
    port,
    stats: () => calls.stats(),
    close: async () => {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
      });
      await options.store.close();
    },
  };
}
