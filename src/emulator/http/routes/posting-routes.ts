import { renderPosting } from '../../model/posting-ledger.js';
import type { ExportPageView } from '../export-page-view.js';
import { identityParams } from '../query-params.js';
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
        const { data, readings } = context;
        const { phone, email } = identityParams(request.query);
        if (!phone && !email) throw SourceError.badRequest('phone or email is required');
        const asked = readings.page(request.query, 'pageNumber', 'pageSize', data.options.maxPageSize);
        const customer = data.findCustomer(phone, email);
        const postings = customer < 0 ? [] : context.activity.postingsOf(customer);
        if (postings.length === 0) throw SourceError.dataNotFound();
        const newestFirst = data.options.postingsOrder === 'newest-first';
        let view: ExportPageView = {
          totalCount: postings.length,
          records: (from, to) =>
            Array.from({ length: to - from }, (_, n) =>
              readings.form.posting(renderPosting(postings[newestFirst ? postings.length - 1 - from - n : from + n]!)),
            ),
        };
        const customerId = data.directory.customerId(customer);
        view = readings.orderView(view, `postings ${customerId}`);
        if (context.dataView)
          view = context.dataView(view, {
            stream: 'postings',
            customerId,
            page: asked.ordinal,
            size: asked.size,
            request,
          });
        const to = Math.min(view.totalCount, asked.from + asked.size);
        const page = asked.from < to ? view.records(asked.from, to) : [];
        return json(200, { pageNumber: asked.page, pageSize: asked.size, totalCount: view.totalCount, data: page });
      },
    },
  ];
}
