import type { ResolvedConfig } from '../config/load-config.js';
import type { Integration, LoyaltyApi } from '../source/loyalty-api.js';
import { parseSourceTimestamp } from '../transform/timestamps.js';

/** An integration as `check` and `probe` say it: its `created` read as every timestamp of the source is. */
export interface IntegrationSeen extends Omit<Integration, 'created'> {
  /** UTC, ISO 8601; null when the service sent none. */
  created: string | null;
  /** As the service sent it. */
  createdAsSent: string | null;
}

/**
 * The integration `source.integration_token` names, asked of the service, or undefined when no token is set. A
 * `created` that is no timestamp of the spec's shapes fails as a record would: the line names the field.
 */
export async function integrationSeen(api: LoyaltyApi, config: ResolvedConfig): Promise<IntegrationSeen | undefined> {
  const token = config.source.integration_token;
  if (!token) return undefined;
  const integration = await api.integration(token);
  const created =
    integration.created === null
      ? null
      : parseSourceTimestamp(integration.created, config.source.timezone, 'integration.created');
  return { ...integration, created, createdAsSent: integration.created };
}

/** One line: which integration the token is. */
export function integrationLine(seen: IntegrationSeen): string {
  const created = seen.created ? `, created ${seen.created} (${seen.createdAsSent})` : ', created: not sent';
  return `integration: ${JSON.stringify(seen.title ?? '(no title)')}${seen.id === null ? '' : ` (id ${seen.id})`} on ${seen.shopDomain ?? '(no shop domain)'}${created}`;
}
