import { hash32 } from '../faults/request-dice.js';
import { formatDay, parseDay } from '../model/calendar.js';
import { Stream, randomFor } from '../model/random.js';
import type { ZoneClock } from '../model/zone-clock.js';
import type { ExportPageView } from '../http/export-page-view.js';
import { dayRangeParams, intParam } from '../http/query-params.js';
import type { EmulatorResponse } from '../http/request-pipeline.js';
import { type ApiError, json } from '../http/responses.js';
import type { ResolvedReadings } from './readings.js';
import { ServedForm } from './served-form.js';

/** A page asked for, as the readings of page numbering and size caps read it. */
export interface PageAsked {
  /** The page number as sent (and echoed). */
  page: number;
  /** Records per page served (the asked size, or the cap). */
  size: number;
  /** Position of the page's first record. */
  from: number;
  /** The page counted from 1 whatever the first page's number, for data views (drift). */
  ordinal: number;
}

const ORDER_BUCKETS = 1 << 16;

/**
 * Everything the readings change in how the emulator answers: page numbering and size caps, the export's
 * end day, the order of a listing between requests, the form of records and of errors. The routes ask it;
 * the data underneath never changes.
 */
export class ReadingLayer {
  readonly form: ServedForm;
  /** Page requests per listing (hashed into buckets, so memory stays bounded), for `listingOrder: 'unstable'`. */
  private orderReads: Uint32Array | null = null;

  constructor(
    readonly readings: ResolvedReadings,
    clock: ZoneClock,
    private readonly seed: number,
  ) {
    this.form = new ServedForm(readings, clock);
  }

  /** The page and size parameters `pageName` and `sizeName` of a listing. */
  page(query: URLSearchParams, pageName: string, sizeName: string, maxPageSize: number): PageAsked {
    const { firstPage, pageSizeCap } = this.readings;
    const page = intParam(query, pageName, firstPage);
    const asked = intParam(query, sizeName, 1, pageSizeCap === null ? maxPageSize : Number.MAX_SAFE_INTEGER);
    const size = pageSizeCap === null ? asked : Math.min(asked, pageSizeCap);
    return { page, size, from: (page - firstPage) * size, ordinal: page - firstPage + 1 };
  }

  /**
   * The inclusive days an export serves for its `start` and `end`: with `exportEnd: 'exclusive'` the `end` day
   * is left out, and `start` = `end` serves nothing (`empty`).
   */
  exportDays(query: URLSearchParams): { start: string; end: string; empty: boolean } {
    const { start, end } = dayRangeParams(query);
    if (this.readings.exportEnd === 'inclusive') return { start, end, empty: false };
    const last = formatDay(parseDay(end)! - 1);
    return last < start ? { start, end, empty: true } : { start, end: last, empty: false };
  }

  /**
   * Under `listingOrder: 'unstable'`, the listing rotated by an amount drawn from the seed, the listing's name
   * and how many page requests of it came before: two requests of the same listing see its records in
   * different places, so a client paging by offset meets records twice and misses others.
   */
  orderView(view: ExportPageView, listing: string): ExportPageView {
    const total = view.totalCount;
    if (this.readings.listingOrder === 'stable' || total < 2) return view;
    this.orderReads ??= new Uint32Array(ORDER_BUCKETS);
    const key = hash32(listing);
    const bucket = key & (ORDER_BUCKETS - 1);
    const read = this.orderReads[bucket]!;
    this.orderReads[bucket] = read + 1;
    const shift = randomFor(this.seed, Stream.listingOrder, key, read).int(1, total - 1);
    return {
      totalCount: total,
      records: (from, to) => {
        const a = (from + shift) % total;
        const b = a + (to - from);
        return b <= total ? view.records(a, b) : [...view.records(a, total), ...view.records(0, b - total)];
      },
    };
  }

  /** The response of an error, with the status and body shape of the readings. */
  errorResponse(error: ApiError): EmulatorResponse {
    const { errorStatus, errorBody } = this.readings;
    const status = error.code >= 1000 && errorStatus !== 'mapped' ? errorStatus : error.status;
    switch (errorBody) {
      case 'code-message':
        return json(status, { code: error.code, message: error.message });
      case 'nested':
        return json(status, { error: { code: error.code, message: error.message } });
      case 'status-fields':
        return json(status, { status: 'error', errorCode: String(error.code), errorMessage: error.message });
      case 'text':
        return {
          status,
          headers: { 'content-type': 'text/plain; charset=utf-8' },
          body: `${error.code} ${error.message}`,
        };
    }
  }
}
