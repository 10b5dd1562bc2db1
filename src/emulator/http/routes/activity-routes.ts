import type { EmulatorRequest } from '../request-pipeline.js';
import { SourceError, json } from '../responses.js';
import type { Route } from '../router.js';
import type { RouteContext } from './route-context.js';

/**
 * The emulator's own endpoints for written activity: `GET /_emulator/webhooks` lists the loyalty webhook's
 * subscribers and the delivery counts, `POST` (`{"url": …}`) registers one — the emulated form of "a
 * subscriber is registered through the service's support" —, `POST /_emulator/expiries` fires the webhook
 * for points expired since the last check (`{"events": n}`), and `GET /_emulator/activity` counts what
 * clients wrote.
 */
export function activityRoutes({ activity, webhooks, expiries }: RouteContext): Route[] {
  const listing = () => json(200, { subscribers: webhooks.subscribers(), ...webhooks.stats() });
  return [
    { method: 'GET', path: '/_emulator/webhooks', handle: listing },
    {
      method: 'POST',
      path: '/_emulator/webhooks',
      handle: async (request: EmulatorRequest) => {
        let url: unknown;
        try {
          url = (JSON.parse(await request.readBody()) as { url?: unknown } | null)?.url;
        } catch {
          throw SourceError.badRequest('body must be JSON');
        }
        if (typeof url !== 'string') throw SourceError.badRequest('url is required');
        try {
          webhooks.subscribe(url);
        } catch (error) {
          throw SourceError.badRequest((error as Error).message);
        }
        return listing();
      },
    },
    { method: 'POST', path: '/_emulator/expiries', handle: async () => json(200, { events: await expiries.check() }) },
    {
      method: 'GET',
      path: '/_emulator/activity',
      handle: () =>
        json(200, {
          sales: activity.sales.size,
          rolledBack: [...activity.sales.values()].filter((s) => s.rolledBack).length,
          appointments: activity.appointments.size,
          pageViews: activity.pageViews,
        }),
    },
  ];
}
