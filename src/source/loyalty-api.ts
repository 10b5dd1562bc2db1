import { z } from 'zod';
import type { Window } from '../plan/windows.js';
import { FatalSourceError } from './source-errors.js';
import type { HttpClient, RequestCounter } from './http-client.js';

/** One page of a paginated listing, as the source sends it (records still raw). */
export interface SourcePage {
  pageNumber: number;
  pageSize: number;
  totalCount: number;
  data: unknown[];
}

const count = z.coerce.number().int().min(0);
const pageEnvelope = z.object({ pageNumber: count, pageSize: count, totalCount: count, data: z.array(z.unknown()) });

/** A customer as the postings endpoint is asked about: by phone, or by e-mail when there is no phone. */
export interface CustomerIdentity {
  customerId: string;
  phone: string | null;
  email: string | null;
}

/**
 * The source's read endpoints that the pipeline uses, each returning a validated envelope.
 * A response of the wrong shape is a {@link FatalSourceError} naming the endpoint.
 */
export class LoyaltyApi {
  /** Requests made through this instance. */
  readonly counter: RequestCounter = { requests: 0 };

  constructor(readonly http: HttpClient) {}

  /** The same client with a request counter of its own, for one span. */
  scoped(): LoyaltyApi {
    return new LoyaltyApi(this.http);
  }

  /** `GET /business-data/accounts`: accounts created or changed in the window (both days included). */
  accountsPage(window: Window, page: number, size: number): Promise<SourcePage> {
    return this.pageOf('/business-data/accounts', { start: window.start, end: window.end, page, size }, `accounts ${window.start}..${window.end} page ${page}`);
  }

  /** `GET /business-data/surveys`: survey answers in the window. */
  surveysPage(window: Window, page: number, size: number): Promise<SourcePage> {
    return this.pageOf('/business-data/surveys', { start: window.start, end: window.end, page, size }, `surveys ${window.start}..${window.end} page ${page}`);
  }

  /** `GET /accounts/loyalty/postings` for one customer; 1005 surfaces as DataNotFoundError. */
  postingsPage(customer: CustomerIdentity, page: number, size: number): Promise<SourcePage> {
    const who: Record<string, string> = customer.phone ? { phone: customer.phone } : { email: customer.email ?? '' };
    return this.pageOf('/accounts/loyalty/postings', { ...who, pageNumber: page, pageSize: size }, `postings of ${customer.customerId} page ${page}`);
  }

  /** `GET /accounts/profiles/`: the list of profiles. */
  async profiles(): Promise<unknown[]> {
    const body = await this.http.get('/accounts/profiles/', {}, 'profiles', this.counter);
    if (!Array.isArray(body)) throw new FatalSourceError('profiles: expected a JSON array', 'profiles');
    return body;
  }

  /** `GET /accounts/profiles/{id}`: one profile with its fields. */
  async profile(id: number): Promise<Record<string, unknown>> {
    const body = await this.http.get(`/accounts/profiles/${encodeURIComponent(String(id))}`, {}, `profile ${id}`, this.counter);
    if (!body || typeof body !== 'object' || Array.isArray(body)) throw new FatalSourceError(`profile ${id}: expected a JSON object`, `profile ${id}`);
    return body as Record<string, unknown>;
  }

  private async pageOf(path: string, query: Record<string, string | number>, label: string): Promise<SourcePage> {
    const body = await this.http.get(path, query, label, this.counter);
    const parsed = pageEnvelope.safeParse(body);
    if (!parsed.success) {
      const issue = parsed.error.issues[0]!;
      throw new FatalSourceError(`${label}: unexpected response shape at '${issue.path.join('.') || '(root)'}': ${issue.message}`, label);
    }
    return parsed.data;
  }
}
