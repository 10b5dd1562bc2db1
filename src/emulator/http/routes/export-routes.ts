import { EMPTY_WINDOW, type ExportWindow } from '../../model/export-window.js';
import type { ExportPageView } from '../export-page-view.js';
import { windowPageParams } from '../query-params.js';
import type { EmulatorRequest } from '../request-pipeline.js';
import { json } from '../responses.js';
import type { Route } from '../router.js';
import type { RouteContext } from './route-context.js';

/** Endpoints 12 and 13: the business-data exports, paged over a window of inclusive days. */
export function exportRoutes(context: RouteContext): Route[] {
  const page = (stream: 'accounts' | 'surveys') => (request: EmulatorRequest) => {
    const { data } = context;
    const { start, end, page, size } = windowPageParams(request.query, data.options.maxPageSize);
    const days = data.calendar.span(start, end);
    // Accounts include what clients modified (the activity overlay); surveys are only ever seeded.
    const window: ExportWindow<unknown> =
      stream === 'accounts' ? context.activity.accountsWindow(start, end) : days ? data.surveys.window(days.first, days.last) : EMPTY_WINDOW;
    let view: ExportPageView = {
      totalCount: window.totalCount,
      records: (from, to) => Array.from({ length: to - from }, (_, n) => window.served(from + n)),
    };
    if (context.dataView) view = context.dataView(view, { stream, start, end, page, size, request });
    const from = (page - 1) * size;
    const to = Math.min(view.totalCount, from + size);
    return json(200, { pageNumber: page, pageSize: size, totalCount: view.totalCount, data: from < to ? view.records(from, to) : [] });
  };
  return [
    { method: 'GET', path: '/business-data/accounts', handle: page('accounts') },
    { method: 'GET', path: '/business-data/surveys', handle: page('surveys') },
  ];
}
