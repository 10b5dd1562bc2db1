import { renderPosting } from '../../model/posting-ledger.js';
import type { ExportPageView } from '../export-page-view.js';
import { identityParams, intParam } from '../query-params.js';
import { SourceError, json } from '../responses.js';
import type { Route } from '../router.js';
import type { RouteContext } from './route-context.js';

/**
 * Endpoint 5: a customer's loyalty postings, found by phone or e-mail, newest first unless configured; the
 * data view hook (drift) sees every page read.
 */
export function postingRoutes(context: RouteContext): Route[] {
  return [
    {
      method: 'GET',
      path: '/accounts/loyalty/postings',
      handle: (request) => {
        const { data } = context;
        const { phone, email } = identityParams(request.query);
        if (!phone && !email) throw SourceError.badRequest('phone or email is required');
        const pageSize = intParam(request.query, 'pageSize', 1, data.options.maxPageSize);
        const pageNumber = intParam(request.query, 'pageNumber', 1);
        const customer = data.findCustomer(phone, email);
        const postings = customer < 0 ? [] : context.activity.postingsOf(customer);
        if (postings.length === 0) throw SourceError.dataNotFound();
        const newestFirst = data.options.postingsOrder === 'newest-first';
        let view: ExportPageView = {
          totalCount: postings.length,
          records: (from, to) => Array.from({ length: to - from }, (_, n) => renderPosting(postings[newestFirst ? postings.length - 1 - from - n : from + n]!)),
        };
        if (context.dataView)
          view = context.dataView(view, { stream: 'postings', customerId: data.directory.customerId(customer), page: pageNumber, size: pageSize, request });
        const from = (pageNumber - 1) * pageSize;
        const to = Math.min(view.totalCount, from + pageSize);
        const page = from < to ? view.records(from, to) : [];
        return json(200, { pageNumber, pageSize, totalCount: view.totalCount, data: page });
      },
    },
  ];
}
