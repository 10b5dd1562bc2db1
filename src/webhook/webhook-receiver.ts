import { type IncomingMessage, type ServerResponse, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type Logger, silentLogger } from '../log/logger.js';
import { redactHookUrl } from './hook-path.js';
import { InvalidEventError, parseLoyaltyEvent, type LoyaltyEvent } from './loyalty-event.js';
import type { EventStore, SaveOutcome } from './loyalty-event-store.js';
import { type Admission, WebhookGate, type WebhookGateOptions } from './webhook-gate.js';

/** Options of {@link startWebhookReceiver}: who may call ({@link WebhookGateOptions}), and where calls go. */
export interface WebhookReceiverOptions extends WebhookGateOptions {
  store: EventStore;
  /** Zone of zone-less timestamps in event bodies (`source.timezone`). */
  timezone: string;
  /** Interface to bind. Default `127.0.0.1`. */
  host?: string;
  /** Port; 0 (default) picks a free one. */
  port?: number;
  logger?: Logger;
  /** Largest body accepted. Default 1 MiB. */
  maxBodyBytes?: number;
  /** Seconds a sender is told to wait (`Retry-After`) when the warehouse cannot take an event. Default 5. */
  retryAfterSeconds?: number;
}

/** Calls received since the start, by outcome. */
export interface ReceiverStats {
  stored: number;
  duplicates: number;
  invalid: number;
  /** Valid events the warehouse could not take (answered 503). */
  failed: number;
  /** Calls refused before their body was read: no valid secret, an address not allowed, a wrong path (401/404). */
  refused: number;
  /** Calls over the cap of their source address (answered 429). */
  limited: number;
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

class BodyTooLargeError extends Error {}

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
  const maxBodyBytes = options.maxBodyBytes ?? 1 << 20;
  const gate = new WebhookGate(options);
  const stats: ReceiverStats = { stored: 0, duplicates: 0, invalid: 0, failed: 0, refused: 0, limited: 0 };

  /** Answers a refused request. `connection: close` ends its socket, so a body never read is never drained either. */
  function refuse(req: IncomingMessage, res: ServerResponse, admission: Extract<Admission, { admitted: false }>): void {
    const seen = { client: admission.client, method: req.method, path: redactHookUrl(req.url), reason: admission.reason };
    if (admission.status === 429) {
      stats.limited++;
      logger.debug(seen, 'loyalty webhook call over the cap');
      res.writeHead(429, { 'content-type': 'application/json; charset=utf-8', 'retry-after': String(admission.retryAfterSeconds ?? 1), connection: 'close' });
      res.end('{"error":"too many calls"}');
      return;
    }
    stats.refused++;
    logger.warn(seen, 'loyalty webhook call refused');
    res.writeHead(admission.status, { 'content-type': 'application/json; charset=utf-8', connection: 'close' });
    res.end(admission.status === 401 ? '{"error":"unauthorized"}' : '{"error":"not found"}');
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const answer = (status: number, body: unknown, headers: Record<string, string> = {}) => {
      res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', ...headers }).end(JSON.stringify(body));
    };
    if (req.method === 'GET' && (req.url === '/health' || req.url?.startsWith('/health?'))) return answer(200, { status: 'ok' });
    const admission = await gate.admit(req);
    if (!admission.admitted) return refuse(req, res, admission);
    if (req.method !== 'POST') return answer(405, { error: 'loyalty webhook calls are POSTs' }, { allow: 'POST' });
    // A sender that waits for "100 Continue" before its body hears it only now, once it is let in.
    if (req.headers.expect?.toLowerCase() === '100-continue') res.writeContinue();
    let text: string;
    try {
      text = await readBody(req, maxBodyBytes);
    } catch (error) {
      if (error instanceof BodyTooLargeError) return answer(413, { error: `body over ${maxBodyBytes} bytes` }, { connection: 'close' });
      throw error;
    }
    let event: LoyaltyEvent;
    try {
      event = parseLoyaltyEvent(JSON.parse(text) as unknown, options.timezone);
    } catch (error) {
      if (!(error instanceof SyntaxError || error instanceof InvalidEventError)) throw error;
      stats.invalid++;
      logger.warn({ err: error, client: admission.client, path: redactHookUrl(req.url) }, 'loyalty webhook call rejected');
      return answer(400, { error: error instanceof SyntaxError ? 'body is not JSON' : error.message });
    }
    let outcome: SaveOutcome;
    try {
      outcome = await options.store.save(event);
    } catch (error) {
      stats.failed++;
      logger.error({ err: error, eventKey: event.event_key }, 'loyalty event could not be stored; the sender is asked to retry');
      return answer(503, { error: 'the warehouse cannot take the event now' }, { 'retry-after': String(options.retryAfterSeconds ?? 5) });
    }
    if (outcome === 'stored') stats.stored++;
    else stats.duplicates++;
    logger.info({ eventKey: event.event_key, customerId: event.customer_id, trigger: event.event_trigger, outcome }, 'loyalty event received');
    answer(200, { status: outcome, eventKey: event.event_key });
  }

  const onRequest = (req: IncomingMessage, res: ServerResponse) => {
    handle(req, res).catch((error: unknown) => {
      logger.error({ err: error }, 'loyalty webhook call failed');
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json; charset=utf-8' }).end('{"error":"internal error"}');
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
    stats: () => ({ ...stats }),
    close: async () => {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
      });
      await options.store.close();
    },
  };
}

function readBody(req: IncomingMessage, limit: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let tooLarge = false;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) tooLarge = true;
      else chunks.push(chunk);
    });
    req.on('end', () => (tooLarge ? reject(new BodyTooLargeError()) : resolve(Buffer.concat(chunks).toString('utf8'))));
    req.on('error', reject);
  });
}
