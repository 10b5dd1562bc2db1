import type { EmulatorRequest } from './request-pipeline.js';

/** The records of one paged listing (an export window, a customer's postings) as a page reader sees them. */
export interface ExportPageView {
  /** The `totalCount` to report. */
  readonly totalCount: number;
  /** Served records at positions [from, to), with 0 <= from < to <= totalCount. */
  records(from: number, to: number): unknown[];
}

/** Which listing a view is for, and the page asked for (`page` from 1, `size` records per page). */
export type DataViewContext =
  | {
      stream: 'accounts' | 'surveys';
      /** Inclusive days as requested. */
      start: string;
      end: string;
      page: number;
      size: number;
      request: EmulatorRequest;
    }
  | {
      stream: 'postings';
      /** The customer whose postings are listed. */
      customerId: string;
      page: number;
      size: number;
      request: EmulatorRequest;
    };

/**
 * Replaces the view of a listing for one request; where a drift fault can add or remove records between
 * page reads (and change `totalCount` accordingly) without touching the generated data.
 */
export type DataViewHook = (view: ExportPageView, context: DataViewContext) => ExportPageView;
