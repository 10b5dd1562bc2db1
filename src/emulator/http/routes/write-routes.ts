import type { EmulatorRequest } from '../request-pipeline.js';
import { SourceError, json } from '../responses.js';
import type { Route } from '../router.js';
import { type Body, checkShapes, checkTransaction, requireFields, valueAt } from '../write-validation.js';

const SUCCESS = { status: 'success' };

/**
 * Endpoints 4, 6, 7, 8, 14 and 15. Writes are validated like the source validates them and then
 * acknowledged, but never applied: the dataset stays a pure function of the seed. The only state kept
 * is the set of submitted receipts, so submitting one twice answers 1004.
 */
export function writeRoutes(): Route[] {
  const receipts = new Set<string>();
  return [
    {
      method: 'PUT',
      path: '/accounts/update',
      handle: async (request) => {
        const body = await jsonBody(request);
        const phone = request.query.get('phone') || valueAt(body, 'phone');
        if (!phone && !valueAt(body, 'email')) throw SourceError.atLeastOneRequired('phone, email');
        checkShapes(body, { birthdate: 'day' });
        return json(200, SUCCESS);
      },
    },
    {
      method: 'POST',
      path: '/accounts/transactions/submit',
      handle: async (request) => {
        const body = await jsonBody(request);
        checkTransaction(body);
        const receipt = String(body.receipt);
        if (receipts.has(receipt)) throw SourceError.notUnique('receipt');
        receipts.add(receipt);
        return json(200, SUCCESS);
      },
    },
    {
      method: 'POST',
      path: '/accounts/transactions/rollback',
      handle: async (request) => {
        checkTransaction(await jsonBody(request));
        return json(200, SUCCESS);
      },
    },
    {
      method: 'POST',
      path: '/accounts/appointments/submit',
      handle: async (request) => {
        const body = await jsonBody(request);
        requireFields(body, ['account', 'referenceNumber', 'start', 'end', 'status', 'items']);
        checkShapes(body, { start: 'time', end: 'time', generated: 'time', status: 'number' });
        for (const item of asList(body.items)) {
          requireFields(item, ['sku', 'name', 'price', 'duration']);
          checkShapes(item, { price: 'number', duration: 'number' });
        }
        return json(200, SUCCESS);
      },
    },
    {
      method: 'POST',
      path: '/ecommactivity/purchase',
      handle: async (request) => {
        const body = await jsonBody(request);
        requireFields(body, ['ecommerce.time']);
        checkTransaction(body);
        return json(200, SUCCESS);
      },
    },
    {
      method: 'POST',
      path: '/ecommactivity/pageview',
      handle: async (request) => {
        const body = await jsonBody(request);
        requireFields(body, ['items', 'ecommerce.time']);
        for (const item of asList(body.items)) {
          requireFields(item, ['type', 'sku', 'qty', 'name']);
          if (item.type !== 'Product' && item.type !== 'Service') throw SourceError.invalidFields('items.type');
        }
        return json(200, SUCCESS);
      },
    },
  ];
}

async function jsonBody(request: EmulatorRequest): Promise<Body> {
  let body: unknown;
  try {
    body = JSON.parse(await request.readBody());
  } catch {
    throw SourceError.badRequest('body must be JSON');
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw SourceError.badRequest('body must be a JSON object');
  return body as Body;
}

function asList(value: unknown): Body[] {
  if (!Array.isArray(value)) throw SourceError.invalidFields('items');
  return value as Body[];
}
