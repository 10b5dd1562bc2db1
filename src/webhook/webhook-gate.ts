import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import ipaddr from 'ipaddr.js';
import proxyAddr from 'proxy-addr';
import { RateLimiterMemory, RateLimiterRes } from 'rate-limiter-flexible';
import { parseHookPath } from './hook-path.js';
import { secretProblem } from './receiver-secrets.js';
import { WebhookGateOptionError } from './webhook-errors.js';

/** Who may call the receiver. Only `secrets` (or `authenticatedUpstream`) is required; the rest is off by default. */
export interface WebhookGateOptions {
  /**
   * Secrets a call must carry, as the last segment of `/hooks/<secret>` or in `secretHeader`: the current one and,
   * during a rotation, the previous one. Each at least 32 characters of `A-Z a-z 0-9 . _ ~ -`.
   */
  secrets: readonly string[];
  /** A header that may carry the secret instead, on `POST /hooks` or below it (e.g. `X-Loyalty-Webhook-Secret`). */
  secretHeader?: string;
  /**
   * Run without a secret because something in front of the receiver authenticates every call. Required when
   * `secrets` is empty, so that an open receiver is never an accident.
   */
  authenticatedUpstream?: boolean;
  /** Source addresses allowed to call: IPv4 or IPv6 addresses or CIDR ranges. Default: any address. */
  allowFrom?: readonly string[];
  /**
   * Proxies whose `X-Forwarded-For` is believed (addresses, CIDR ranges, or `loopback`, `linklocal`,
   * `uniquelocal`). Default none: the address that connected is the caller, whatever the header says.
   */
  trustedProxies?: readonly string[];
  /** Calls per source address (an IPv6 caller: per /64 network) in `perSeconds` (default 1); beyond, 429. Default: no cap. */
  rateLimit?: { calls: number; perSeconds?: number };
}

/** The gate's answer for one request, decided from its address, path and headers alone. */
export type Admission =
  | { admitted: true; client: string }
  /** `reason` is for the log only: every refusal of a kind gets the same answer, so a caller learns nothing. */
  | { admitted: false; client: string; status: 401 | 404 | 429; reason: string; retryAfterSeconds?: number };

type AddressMatch = (address: string, hop: number) => boolean;

/**
 * Decides, before a body is read, whether a request may reach the event store: its source address must be
 * allowed, within the cap, and (unless `authenticatedUpstream`) it must carry a secret. Secrets are compared
 * through their SHA-256 digests with `timingSafeEqual`, every one of them every time, so neither the time
 * taken nor the length of a guess tells how close it came.
 */
export class WebhookGate {
  private readonly digests: Buffer[];
  private readonly header: string | undefined;
  private readonly allowed: AddressMatch | undefined;
  private readonly trusted: AddressMatch | undefined;
  private readonly limiter: RateLimiterMemory | undefined;

  constructor(options: WebhookGateOptions) {
    for (const secret of options.secrets) {
      const problem = secretProblem(secret);
      if (problem) throw new WebhookGateOptionError('secret', problem);
    }
    if (options.secrets.length === 0 && !options.authenticatedUpstream) {
      throw new WebhookGateOptionError(
        'secret',
        'none given: a receiver without a secret must be told that calls are authenticated in front of it',
      );
    }
    this.digests = options.secrets.map(digest);
    if (options.secretHeader !== undefined && !/^[A-Za-z0-9!#$%&'*+.^_`|~-]+$/.test(options.secretHeader)) {
      throw new WebhookGateOptionError('secret-header', `"${options.secretHeader}" is not an HTTP header name`);
    }
    this.header = options.secretHeader?.toLowerCase();
    this.allowed = addressMatch('allow-from', options.allowFrom);
    this.trusted = addressMatch('trusted-proxy', options.trustedProxies);
    if (options.rateLimit) {
      const { calls, perSeconds = 1 } = options.rateLimit;
      if (!Number.isInteger(calls) || calls < 1)
        throw new WebhookGateOptionError('max-calls-per-second', `${calls} is not a whole number of at least 1`);
      if (!Number.isInteger(perSeconds) || perSeconds < 1)
        throw new WebhookGateOptionError(
          'max-calls-per-second',
          `a window of ${perSeconds} s is not a whole number of seconds`,
        );
      this.limiter = new RateLimiterMemory({ points: calls, duration: perSeconds });
    }
  }

  /** Whether calls are checked for a secret. */
  get checksSecret(): boolean {
    return this.digests.length > 0;
  }

  /**
   * The caller's address: the peer's, or — when the peer is a trusted proxy — the nearest address in
   * `X-Forwarded-For` that is not itself a trusted proxy. An IPv4 address mapped into IPv6 is shown as IPv4.
   */
  clientOf(req: IncomingMessage): string {
    const address = this.trusted ? proxyAddr(req, this.trusted) : (req.socket.remoteAddress ?? '');
    return ipaddr.isValid(address) ? ipaddr.process(address).toString() : address;
  }

  /** Admits a request, or says what to answer. Checks the address first, then the cap, then the secret. */
  async admit(req: IncomingMessage): Promise<Admission> {
    const client = this.clientOf(req);
    const refuse = (status: 401 | 404 | 429, reason: string, retryAfterSeconds?: number): Admission => ({
      admitted: false,
      client,
      status,
      reason,
      ...(retryAfterSeconds ? { retryAfterSeconds } : {}),
    });
    if (this.allowed && !this.allowed(client, 0)) return refuse(401, 'source address not allowed');
    if (this.limiter) {
      try {
        await this.limiter.consume(capKey(client));
      } catch (error) {
        if (!(error instanceof RateLimiterRes)) throw error;
        return refuse(429, 'over the call cap', Math.max(1, Math.ceil(error.msBeforeNext / 1000)));
      }
    }
    const path = parseHookPath(req.url);
    if (!this.checksSecret)
      return path.kind === 'other' ? refuse(404, 'not a webhook path') : { admitted: true, client };
    // Both places are always looked at, so an answer takes as long whichever form a call uses.
    const inPath = this.holdsSecret(path.kind === 'segment' ? path.segment : undefined);
    const value = this.header === undefined ? undefined : req.headers[this.header];
    const inHeader = this.holdsSecret(path.kind !== 'other' && typeof value === 'string' ? value : undefined);
    return inPath || inHeader
      ? { admitted: true, client }
      : refuse(401, path.kind === 'other' ? 'not a webhook path' : 'no valid secret');
  }

  private holdsSecret(offered: string | undefined): boolean {
    const candidate = digest(offered ?? '');
    let found = false;
    for (const secret of this.digests) found = timingSafeEqual(candidate, secret) || found;
    return offered !== undefined && found;
  }
}

function digest(text: string): Buffer {
  return createHash('sha256').update(text, 'utf8').digest();
}

function addressMatch(option: string, list: readonly string[] | undefined): AddressMatch | undefined {
  if (!list || list.length === 0) return undefined;
  try {
    return proxyAddr.compile([...list]);
  } catch (error) {
    throw new WebhookGateOptionError(option, error instanceof Error ? error.message : String(error));
  }
}

/** One host commonly holds a whole IPv6 /64, so an IPv6 caller is capped by its /64 network rather than its address. */
function capKey(client: string): string {
  if (!ipaddr.isValid(client)) return client;
  const address = ipaddr.parse(client);
  return address.kind() === 'ipv6'
    ? `${(address as ipaddr.IPv6).parts
        .slice(0, 4)
        .map((p) => p.toString(16))
        .join(':')}::/64`
    : address.toString();
}
