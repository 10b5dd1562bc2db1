import type { TruthAccount } from '../../model/account-export.js';
import { EMPTY_WINDOW, type ExportWindow } from '../../model/export-window.js';
import type { ExportPageView } from '../export-page-view.js';
import type { EmulatorRequest } from '../request-pipeline.js';
import { json } from '../responses.js';
import type { Route } from '../router.js';
import type { RouteContext } from './route-context.js';

/** Endpoints 12 and 13: the business-data exports, paged over a window of days. */
export function exportRoutes(context: RouteContext): Route[] {
  const page = (stream: 'accounts' | 'surveys') => (request: EmulatorRequest) => {
    const { data, readings } = context;
    const { start, end, empty } = readings.exportDays(request.query);
    const asked = readings.page(request.query, 'page', 'size', data.options.maxPageSize);
    const days = empty ? null : data.calendar.span(start, end);
    // Accounts include what clients modified (the activity overlay); surveys are only ever seeded.
    const window: ExportWindow<unknown> = empty
      ? EMPTY_WINDOW
      : stream === 'accounts'
        ? context.activity.accountsWindow(start, end, readings.readings.accountsListing)
        : days
          ? data.surveys.window(days.first, days.last)
          : EMPTY_WINDOW;
    const { form } = readings;
    // Malformed records are served as they are (the ground truth's rejects hold them as served).
    const served = (position: number): unknown => {
      const record = window.served(position);
      const entry = window.canonical(position);
      if (!form.active || !('rows' in entry) || entry.fieldRejects) return record;
      return stream === 'accounts'
        ? form.account(record as Record<string, unknown>, (entry.rows[0] as TruthAccount).custom_fields)
        : form.surveyElement(record as Record<string, unknown>);
    };
    let view: ExportPageView = {
      totalCount: window.totalCount,
      records: (from, to) => Array.from({ length: to - from }, (_, n) => served(from + n)),
    };
    view = readings.orderView(view, `${stream} ${start}..${end}`);
    if (context.dataView)
      view = context.dataView(view, { stream, start, end, page: asked.ordinal, size: asked.size, request });
    const to = Math.min(view.totalCount, asked.from + asked.size);
    return json(200, {
      pageNumber: asked.page,
      pageSize: asked.size,
      totalCount: view.totalCount,
      data: asked.from < to ? view.records(asked.from, to) : [],
    });
  };
  return [
    { method: 'GET', path: '/business-data/accounts', handle: page('accounts') },
    { method: 'GET', path: '/business-data/surveys', handle: page('surveys') },
  ];
}
