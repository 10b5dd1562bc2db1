import { registerSecret } from '../log/redact.js';
import { FatalSourceError } from './source-errors.js';

/**
 * The integration an integration token names (`POST /accounts/integrations`), as far as an operator needs to know
 * which one the credentials are. Its secrets (`apiKey`, `password`, `sharedSecret`, the client's `apiToken`) are not
 * kept: they are registered with the log's redaction and dropped here.
 */
export interface Integration {
  id: number | null;
  title: string | null;
  shopDomain: string | null;
  /** As the service sends it: the spec's month-name style, `Mon DD, YYYY H:MM:SS AM/PM`. */
  created: string | null;
  /** The title of its online API client. */
  clientTitle: string | null;
}

/** Members of the integration and of its client that hold secrets. */
const SECRET_MEMBERS = ['apiKey', 'password', 'sharedSecret', 'integrationToken', 'apiToken'];

/** Reads the answer of `POST /accounts/integrations`: the integration without its secrets. */
export function integrationOf(body: unknown, label: string): Integration {
  if (!body || typeof body !== 'object' || Array.isArray(body))
    throw new FatalSourceError(`${label}: expected a JSON object`, label);
  const b = body as Record<string, unknown>;
  const client = (b.onlineAPIClientDTO ?? {}) as Record<string, unknown>;
  // whatever else happens to the answer, its secrets are never written anywhere
  for (const holder of [b, client])
    for (const member of SECRET_MEMBERS) if (typeof holder[member] === 'string') registerSecret(holder[member]);
  const text = (v: unknown) => (typeof v === 'string' && v !== '' && v !== 'NULL' ? v : null);
  const id = typeof b.id === 'number' ? b.id : typeof b.id === 'string' && /^\d+$/.test(b.id) ? Number(b.id) : null;
  return {
    id,
    title: text(b.title),
    shopDomain: text(b.shopDomain),
    created: text(b.created),
    clientTitle: text(client.title),
  };
}
