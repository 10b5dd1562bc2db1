import type { CustomerVersion } from '../../model/customer-directory.js';
import { loyaltySummary } from '../../model/loyalty-summary.js';
import { renderVoucher } from '../../model/vouchers.js';
import { formatUtcWall } from '../../model/zone-clock.js';
import { identityParams } from '../query-params.js';
import type { EmulatorRequest } from '../request-pipeline.js';
import { SourceError, json } from '../responses.js';
import type { Route } from '../router.js';
import type { RouteContext } from './route-context.js';
import { servedFields } from '../../model/custom-field-pool.js';

/**
 * Endpoints 2, 3 and 9: customer search, lookup (with loyalty) and vouchers. The lookup and the vouchers
 * answer as of the emulator's clock: a customer created after it is not found yet.
 */
export function customerRoutes(context: RouteContext): Route[] {
  const { data, activity } = context;
  return [
    { method: 'GET', path: '/accounts/search', handle: (request) => search(context, request) },
    {
      method: 'GET',
      path: '/accounts',
      handle: (request) => {
        const { phone, email } = identityParams(request.query);
        if (!phone && !email) throw SourceError.badRequest('phone or email is required');
        const includeLoyalty = request.query.get('includeLoyalty') ?? 'false';
        if (includeLoyalty !== 'true' && includeLoyalty !== 'false') {
          throw SourceError.badRequest(`includeLoyalty must be true or false, got "${includeLoyalty}"`);
        }
        const now = context.now();
        const customer = data.findCustomer(phone, email);
        if (customer < 0 || !activity.existsAt(customer, now)) throw SourceError.dataNotFound();
        const version = activity.latest(customer);
        const profile = {
          // The source's sample shows the phone as a JSON number here (and only here).
          phone: version.phone === null ? null : Number(version.phone),
          email: version.email,
          accountId: version.customerId,
          first: version.first,
          last: version.last,
          birthdate: version.birthdate,
          gender: version.gender,
          city: version.city,
          country: version.country,
          language: version.language,
          nationality: version.nationality,
          businessFields: servedFields(version.customFields),
        };
        const body =
          includeLoyalty === 'true'
            ? { profile, loyalty: loyaltySummary(activity.loyaltyOf(customer, now)) }
            : { profile };
        return json(200, context.readings.form.lookup(body));
      },
    },
    {
      method: 'GET',
      path: '/accounts/vouchers/get',
      handle: (request) => {
        const { phone, email } = identityParams(request.query);
        if (!phone && !email) throw SourceError.atLeastOneRequired('phone, email');
        const now = context.now();
        const customer = data.findCustomer(phone, email);
        if (customer < 0 || !activity.existsAt(customer, now)) return json(200, []);
        return json(
          200,
          activity.vouchersOf(customer, now).map((voucher) => context.readings.form.voucher(renderVoucher(voucher))),
        );
      },
    },
  ];
}

/** Partial, case-insensitive matching on first, last, phone and e-mail; scans customers in index order. */
function search({ data, activity, readings }: RouteContext, request: EmulatorRequest) {
  const { query } = request;
  const fieldsParam = query.get('businessFieldsRequired');
  if (fieldsParam === null) throw SourceError.badRequest('businessFieldsRequired is required');
  const { page, size, from } = readings.page(query, 'page', 'size', data.options.maxPageSize);
  const wanted = fieldsParam === '' ? [] : fieldsParam.split(',');
  const filters = (['first', 'last', 'phone', 'email'] as const)
    .map((name) => [name, query.get(name)?.toLowerCase() ?? ''] as const)
    .filter(([, value]) => value !== '');
  const hits: number[] = [];
  let totalCount = data.directory.size;
  if (filters.length === 0) {
    for (let i = from; i < Math.min(totalCount, from + size); i++) hits.push(i);
  } else {
    totalCount = 0;
    for (let i = 0; i < data.directory.size; i++) {
      const base = activity.hasProfileChanges(i) ? activity.latest(i) : data.directory.base(i);
      if (!filters.every(([name, value]) => base[name]?.toLowerCase().includes(value))) continue;
      if (totalCount >= from && totalCount < from + size) hits.push(i);
      totalCount++;
    }
  }
  const records = hits.map((i) => searchRecord(activity.latest(i), wanted));
  return json(200, { pageNumber: page, pageSize: size, totalCount, data: records });
}

function searchRecord(version: CustomerVersion, wanted: readonly string[]): Record<string, unknown> {
  const fields = new Map(Object.entries(servedFields(version.customFields)));
  return {
    phone: version.phone,
    email: version.email,
    accountId: version.customerId,
    first: version.first,
    last: version.last,
    birthdate: version.birthdate,
    profileSet: `${formatUtcWall(version.profileSetMs)} UTC`,
    businessFields: Object.fromEntries(
      wanted.filter((name) => fields.has(name)).map((name) => [name, fields.get(name) ?? null]),
    ),
  };
}
