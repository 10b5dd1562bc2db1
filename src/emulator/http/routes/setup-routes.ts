import { integrationFor } from '../../model/integration.js';
import { PROFILES, profileWithFields } from '../../model/profiles.js';
import { SourceError, json } from '../responses.js';
import type { Route } from '../router.js';
import type { RouteContext } from './route-context.js';

/** Endpoints 1, 10 and 11: the integration and the profile definitions. */
export function setupRoutes({ readings, data }: Pick<RouteContext, 'readings' | 'data'>): Route[] {
  return [
    {
      method: 'POST',
      path: '/accounts/integrations',
      handle: async (request) => {
        const text = await request.readBody();
        let body: unknown = {};
        if (text.trim() !== '') {
          try {
            body = JSON.parse(text);
          } catch {
            throw SourceError.badRequest('body must be JSON');
          }
        }
        const token =
          typeof body === 'object' && body !== null ? (body as Record<string, unknown>).integrationToken : undefined;
        if (typeof token !== 'string' || token === '') throw SourceError.atLeastOneRequired('integrationToken');
        return json(200, integrationFor(token, data.options.integrationCreated));
      },
    },
    { method: 'GET', path: /^\/accounts\/profiles\/?$/, handle: () => json(200, readings.form.other(PROFILES)) },
    {
      method: 'GET',
      path: /^\/accounts\/profiles\/([^/]+)$/,
      handle: (_, [id]) => {
        if (!/^\d+$/.test(id!)) throw SourceError.badRequest(`profile id must be an integer, got "${id}"`);
        const profile = profileWithFields(Number(id), data.options.badProfileField);
        if (!profile) throw SourceError.badRequest(`no profile with id ${id}`);
        return json(200, readings.form.other(profile));
      },
    },
  ];
}
