import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from '../log/logger.js';
import { redactHookUrl } from './hook-path.js';
import { MAX_EVENT_BYTES, parseLoyaltyEvent, type LoyaltyEvent } from './loyalty-event.js';
import type { EventStore, SaveOutcome } from './loyalty-event-store.js';
import { type Admission, WebhookGate, type WebhookGateOptions } from './webhook-gate.js';
import { InvalidEventError } from './webhook-errors.js';

/** Calls received since the start, by outcome. */
export interface ReceiverStats {
  stored: number;
  duplicates: number;
  invalid: number;
  /** Valid events whose values `loyalty_events` refused, kept in `_etl_event_quarantine` (answered 200). */
  quarantined: number;
  /** Valid events the warehouse could not take (answered 503). */
  failed: number;
  /** Calls refused before their body was read: no valid secret, an address not allowed, a wrong path (401/404). */
  refused: number;
  /** Calls over the cap of their source address (answered 429). */
  limited: number;
}

/** What {@link WebhookCalls} needs of the receiver's options. */
export interface WebhookCallOptions extends WebhookGateOptions {
  store: EventStore;
  /** Zone of zone-less timestamps in event bodies (`source.timezone`). */
  timezone: string;
  /** Largest body accepted. Default {@link MAX_EVENT_BYTES}, 64 KiB. */
  maxBodyBytes?: number;
  /** Seconds a sender is told to wait (`Retry-After`) when the warehouse cannot take an event. Default 5. */
  retryAfterSeconds?: number;
}

class BodyTooLargeError extends Error {}

/**
 * Deepest nesting of arrays and objects a body may have. The service's bodies nest four levels; a limit well
 * above that refuses, with 400, a body built to exhaust the stack of whatever walks it.
 */
export const MAX_BODY_DEPTH = 64;

/** A call's answer before it is written: status, JSON body and extra headers. */
interface Answer {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
}

/**
 * The receiver's calls, one at a time: let in or refused by the gate, then the body read, validated and stored.
 * Each step either hands on what it made or returns the answer that ends the call.
 */
export class WebhookCalls {
  private readonly gate: WebhookGate;
  private readonly maxBodyBytes: number;
  private readonly counts: ReceiverStats = {
    stored: 0,
    duplicates: 0,
    invalid: 0,
    quarantined: 0,
    failed: 0,
    refused: 0,
    limited: 0,
  };

  constructor(
    private readonly options: WebhookCallOptions,
    private readonly logger: Logger,
  ) {
    this.gate = new WebhookGate(options);
    this.maxBodyBytes = options.maxBodyBytes ?? MAX_EVENT_BYTES;
  }

  stats(): ReceiverStats {
    return { ...this.counts };
  }

  async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (req.method === 'GET' && (req.url === '/health' || req.url?.startsWith('/health?')))
      return answer(res, { status: 200, body: { status: 'ok' } });
    const admission = await this.gate.admit(req);
    if (!admission.admitted) return this.refuse(req, res, admission);
    if (req.method !== 'POST')
      return answer(res, {
        status: 405,
        body: { error: 'loyalty webhook calls are POSTs' },
        headers: { allow: 'POST' },
      });
    // a declared length over the cap is refused before a byte of the body is read
    const declared = Number(req.headers['content-length']);
    if (Number.isFinite(declared) && declared > this.maxBodyBytes) return answer(res, this.tooLarge());
    // A sender that waits for "100 Continue" before its body hears it only now, once it is let in.
    if (req.headers.expect?.toLowerCase() === '100-continue') res.writeContinue();
    const event = await this.readEvent(req, admission.client);
    answer(res, 'status' in event ? event : await this.store(event));
  }

  /** Answers a refused request. `connection: close` ends its socket, so a body never read is never drained either. */
  private refuse(req: IncomingMessage, res: ServerResponse, admission: Extract<Admission, { admitted: false }>): void {
    const seen = {
      client: admission.client,
      method: req.method,
      path: redactHookUrl(req.url),
      reason: admission.reason,
    };
    if (admission.status === 429) {
      this.counts.limited++;
      this.logger.debug(seen, 'loyalty webhook call over the cap');
      const headers = { 'retry-after': String(admission.retryAfterSeconds ?? 1), connection: 'close' };
      return answer(res, { status: 429, body: { error: 'too many calls' }, headers });
    }
    this.counts.refused++;
    this.logger.warn(seen, 'loyalty webhook call refused');
    answer(res, {
      status: admission.status,
      body: { error: admission.status === 401 ? 'unauthorized' : 'not found' },
      headers: { connection: 'close' },
    });
  }

  /** The call's event, or the answer for a body too large, not JSON or not a loyalty event. */
  private async readEvent(req: IncomingMessage, client: string): Promise<LoyaltyEvent | Answer> {
    let text: string;
    try {
      text = await readBody(req, this.maxBodyBytes);
    } catch (error) {
      if (error instanceof BodyTooLargeError) return this.tooLarge();
      throw error;
    }
    try {
      if (nestingOver(text, MAX_BODY_DEPTH))
        throw new InvalidEventError(`body nests deeper than ${MAX_BODY_DEPTH} levels`);
      return parseLoyaltyEvent(JSON.parse(text) as unknown, this.options.timezone);
    } catch (error) {
      // whatever reading the body throws is the body's doing, and sending it again would not help: a 400, never a 5xx
      this.counts.invalid++;
      this.logger.warn({ err: error, client, path: redactHookUrl(req.url) }, 'loyalty webhook call rejected');
      const problem =
        error instanceof SyntaxError
          ? 'body is not JSON'
          : error instanceof InvalidEventError
            ? error.message
            : 'body is no loyalty event';
      return { status: 400, body: { error: problem } };
    }
  }

  private tooLarge(): Answer {
    return { status: 413, body: { error: `body over ${this.maxBodyBytes} bytes` }, headers: { connection: 'close' } };
  }

  /** Stores the event; the answer comes once the store committed it, or asks the sender to retry. */
  private async store(event: LoyaltyEvent): Promise<Answer> {
    let outcome: SaveOutcome;
    try {
      outcome = await this.options.store.save(event);
    } catch (error) {
      this.counts.failed++;
      this.logger.error(
        { err: error, eventKey: event.event_key },
        'loyalty event could not be stored; the sender is asked to retry',
      );
      return {
        status: 503,
        body: { error: 'the warehouse cannot take the event now' },
        headers: { 'retry-after': String(this.options.retryAfterSeconds ?? 5) },
      };
    }
    if (outcome === 'stored') this.counts.stored++;
    else if (outcome === 'duplicate') this.counts.duplicates++;
    else {
      this.counts.quarantined++;
      this.logger.error(
        { eventKey: event.event_key, customerId: event.customer_id },
        'loyalty event not storable in loyalty_events: kept in _etl_event_quarantine',
      );
    }
    this.logger.info(
      { eventKey: event.event_key, customerId: event.customer_id, trigger: event.event_trigger, outcome },
      'loyalty event received',
    );
    return { status: 200, body: { status: outcome, eventKey: event.event_key } };
  }
}

function answer(res: ServerResponse, { status, body, headers }: Answer): void {
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', ...headers }).end(JSON.stringify(body));
}

/** Whether JSON text nests arrays and objects deeper than `limit`, found in one pass without parsing it. */
export function nestingOver(text: string, limit: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c)
        i++; // a backslash: the next character is escaped
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) {
      if (++depth > limit) return true;
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
  return false;
}

/**
 * The body as text, or {@link BodyTooLargeError} as soon as it passes `limit`: the rest is never read (the answer
 * closes the connection), so a body sent without a length cannot make the receiver read more than the cap either.
 */
function readBody(req: IncomingMessage, limit: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size <= limit) return void chunks.push(chunk);
      req.off('data', onData);
      req.pause();
      reject(new BodyTooLargeError());
    };
    req.on('data', onData);
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}
