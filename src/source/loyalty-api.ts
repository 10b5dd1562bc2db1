import { integrationOf, type Integration } from './integration.js';
import { z } from 'zod';
import { addDays } from '../plan/days.js';
import type { Window } from '../plan/windows.js';
import { FatalSourceError } from './source-errors.js';
import type { HttpClient, RequestCounter, SourceAnswer } from './http-client.js';

/**
 * What the endpoints below read answers through: the live {@link HttpClient}, or the raw archive during a replay
 * (`source/archive/archived-source.ts`), which answers each request with the answer kept for it.
 */
export type { Integration };

export interface SourceClient {
  get: HttpClient['get'];
  setRequestsPerSecond(perSecond: number): void;
  /** Requests sent so far, retries included. */
  readonly requestCount: number;
  /** Requests tried again so far (none for a client that never retries). */
  readonly retryCount?: number;
  /** POST, for the one read the service answers to a POST (the integration); a client of the archive has none. */
  post?: HttpClient['post'];
}

/** The endpoints whose answer observes a customer at the instant it arrived: its state, vouchers and postings. */
const OBSERVED_PATHS = new Set(['/accounts', '/accounts/vouchers/get', '/accounts/loyalty/postings']);

/** One page of a paginated listing, as the source sends it (records still raw). */
export interface SourcePage {
  pageNumber: number;
  pageSize: number;
  totalCount: number;
  data: unknown[];
}

/** A whole number, sent as a JSON number or as digits (never null, never empty: that would read as 0). */
const count = z
  .union([z.number(), z.string().regex(/^\d+$/, 'must be a whole number').transform(Number)])
  .pipe(z.int().min(0));
const pageEnvelope = z.looseObject({
  pageNumber: count,
  pageSize: count,
  totalCount: count,
  data: z.array(z.unknown()),
});

/**
 * Conventions of the source the spec leaves open and only its operator can state (`source.export_end`,
 * `source.first_page`). Callers always count pages from 1 and name windows by inclusive days; the client asks the
 * source its own way.
 */
export interface SourceConventions {
  /** `exclusive`: an export's `end` is the day after the last day wanted. Default `inclusive`. */
  exportEnd?: 'inclusive' | 'exclusive';
  /** The number the source gives its first page. Default 1. */
  firstPage?: 0 | 1;
}

/** A customer as the postings endpoint is asked about: by phone, or by e-mail when there is no phone. */
export interface CustomerIdentity {
  customerId: string;
  phone: string | null;
  email: string | null;
}

/** How a per-customer endpoint finds the customer: by phone, or by e-mail when there is no phone. */
function identity(customer: CustomerIdentity): Record<string, string> {
  return customer.phone ? { phone: customer.phone } : { email: customer.email ?? '' };
}

function customerKey(query: Record<string, string>): string {
  return query.phone !== undefined ? `phone:${query.phone}` : `email:${query.email ?? ''}`;
}

/**
 * The source's read endpoints that the pipeline uses, each returning a validated envelope. A response of
 * the wrong shape, or a page other than the one asked for, is a {@link FatalSourceError} whose message
 * names the endpoint, the window (or customer) and the page.
 */
export class LoyaltyApi<C extends SourceClient = SourceClient> {
  /** Requests made through this instance. */
  private readonly calls = new AbortController();
  /** When each state answer not yet observed arrived, by customer (phone or e-mail): taken by {@link observedAt}. */
  private readonly arrived = new Map<string, string>();
  private archive: ((answer: SourceAnswer) => void) | undefined;
  readonly counter: RequestCounter = {
    requests: 0,
    signal: this.calls.signal,
    keep: (answer) => {
      if (OBSERVED_PATHS.has(answer.path)) this.arrived.set(customerKey(answer.query), answer.at);
      this.archive?.(answer);
    },
  };

  private readonly exportEnd: 'inclusive' | 'exclusive';
  private readonly firstPage: 0 | 1;

  constructor(
    readonly http: C,
    readonly conventions: SourceConventions = {},
  ) {
    this.exportEnd = conventions.exportEnd ?? 'inclusive';
    this.firstPage = conventions.firstPage ?? 1;
  }

  /** Calls off every request of this instance still queued, in flight or waiting to retry. */
  cancel(reason: string): void {
    this.calls.abort(reason);
  }

  /** The same client with a request counter of its own, for one span. */
  scoped(): LoyaltyApi<C> {
    return new LoyaltyApi(this.http, this.conventions);
  }

  /** Hands every answer of this instance's requests to `keep` as well (the raw archive of a span). */
  keepAnswers(keep: (answer: SourceAnswer) => void): void {
    this.archive = keep;
  }

  /**
   * The instant the last state answer about `customer` arrived (now, if none did): the same instant the archive
   * keeps with the answer, so that a replay records the observation at its original instant.
   */
  observedAt(customer: CustomerIdentity): string {
    const key = customerKey(identity(customer));
    const at = this.arrived.get(key);
    this.arrived.delete(key);
    return at ?? new Date().toISOString();
  }

  /** `GET /business-data/accounts`: accounts created or changed in the window (both days included); `page` from 1. */
  accountsPage(window: Window, page: number, size: number): Promise<SourcePage> {
    return this.pageOf(
      '/business-data/accounts',
      this.windowQuery(window),
      'page',
      'size',
      page,
      size,
      `accounts ${window.start}..${window.end} page ${page}`,
    );
  }

  /** `GET /business-data/surveys`: survey answers in the window (both days included); `page` from 1. */
  surveysPage(window: Window, page: number, size: number): Promise<SourcePage> {
    return this.pageOf(
      '/business-data/surveys',
      this.windowQuery(window),
      'page',
      'size',
      page,
      size,
      `surveys ${window.start}..${window.end} page ${page}`,
    );
  }

  /** The `start` and `end` that ask an export for the inclusive days of `window`. */
  private windowQuery(window: Window): Record<string, string> {
    return { start: window.start, end: this.exportEnd === 'exclusive' ? addDays(window.end, 1) : window.end };
  }

  /** `GET /accounts/loyalty/postings` for one customer; 1005 surfaces as DataNotFoundError. */
  postingsPage(customer: CustomerIdentity, page: number, size: number): Promise<SourcePage> {
    return this.pageOf(
      '/accounts/loyalty/postings',
      identity(customer),
      'pageNumber',
      'pageSize',
      page,
      size,
      `postings of ${customer.customerId} page ${page}`,
    );
  }

  /**
   * `GET /accounts?includeLoyalty=true` for one customer: the answer's `loyalty` member (raw; the stream validates
   * it). 1005 surfaces as DataNotFoundError.
   */
  async loyaltyOf(customer: CustomerIdentity): Promise<unknown> {
    const label = `loyalty of ${customer.customerId}`;
    const body = await this.http.get(
      '/accounts',
      { ...identity(customer), includeLoyalty: 'true' },
      label,
      this.counter,
    );
    if (!body || typeof body !== 'object' || Array.isArray(body))
      throw new FatalSourceError(`${label}: expected a JSON object`, label);
    return (body as { loyalty?: unknown }).loyalty;
  }

  /** `GET /accounts/vouchers/get` for one customer: the vouchers listed (raw). */
  async vouchersOf(customer: CustomerIdentity): Promise<unknown[]> {
    const label = `vouchers of ${customer.customerId}`;
    const body = await this.http.get('/accounts/vouchers/get', identity(customer), label, this.counter);
    if (!Array.isArray(body)) throw new FatalSourceError(`${label}: expected a JSON array`, label);
    return body;
  }

  /**
   * `POST /accounts/integrations`: the integration `token` names, without its secrets ({@link integrationOf}).
   * The token travels in the body, never in the URL.
   */
  async integration(token: string): Promise<Integration> {
    if (!this.http.post) throw new FatalSourceError('integration: this client cannot ask the service', 'integration');
    return integrationOf(
      await this.http.post('/accounts/integrations', { integrationToken: token }, 'integration', this.counter),
      'integration',
    );
  }

  /** `GET /accounts/profiles/`: the list of profiles. */
  async profiles(): Promise<unknown[]> {
    const body = await this.http.get('/accounts/profiles/', {}, 'profiles', this.counter);
    if (!Array.isArray(body)) throw new FatalSourceError('profiles: expected a JSON array', 'profiles');
    return body;
  }

  /** `GET /accounts/profiles/{id}`: one profile with its fields. */
  async profile(id: number): Promise<Record<string, unknown>> {
    const body = await this.http.get(
      `/accounts/profiles/${encodeURIComponent(String(id))}`,
      {},
      `profile ${id}`,
      this.counter,
    );
    if (!body || typeof body !== 'object' || Array.isArray(body))
      throw new FatalSourceError(`profile ${id}: expected a JSON object`, `profile ${id}`);
    return body as Record<string, unknown>;
  }

  /** Page `page` (from 1) of a listing, asked as the source numbers its pages; the answer's `pageNumber` counted from 1. */
  private async pageOf(
    path: string,
    query: Record<string, string>,
    pageParam: string,
    sizeParam: string,
    page: number,
    size: number,
    label: string,
  ): Promise<SourcePage> {
    const asked = page - 1 + this.firstPage;
    const body = await this.http.get(path, { ...query, [pageParam]: asked, [sizeParam]: size }, label, this.counter);
    const parsed = pageEnvelope.safeParse(body);
    if (!parsed.success) {
      const issue = parsed.error.issues[0]!;
      throw new FatalSourceError(
        `${label}: unexpected response shape at '${issue.path.join('.') || '(root)'}': ${issue.message}`,
        label,
      );
    }
    const { pageSize, totalCount, data } = parsed.data;
    if (parsed.data.pageNumber !== asked) {
      const hint =
        parsed.data.pageNumber === asked + (this.firstPage === 1 ? -1 : 1)
          ? ` (set source.first_page to ${1 - this.firstPage})`
          : '';
      throw new FatalSourceError(
        `${label}: the source answered page ${parsed.data.pageNumber} to a request for page ${asked}${hint}`,
        label,
      );
    }
    const pageNumber = page;
    // A source that serves fewer records per page than asked would make every offset after page 1 wrong.
    // (A last page may report its own length as pageSize; that is no cap.)
    const short = data.length < size && (page - 1) * size + data.length < totalCount;
    if (short && pageSize < size)
      throw new FatalSourceError(
        `${label}: the source serves pages of ${pageSize} records, not the ${size} asked for (set source.page_size to at most ${pageSize})`,
        label,
      );
    if (data.length > size)
      throw new FatalSourceError(
        `${label}: the page holds ${data.length} records, more than the ${size} asked for`,
        label,
      );
    return { pageNumber, pageSize, totalCount, data };
  }
}
