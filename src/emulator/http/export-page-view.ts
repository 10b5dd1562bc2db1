import type { EmulatorRequest } from './request-pipeline.js';

/** The records of one export window as a page reader sees them. */
export interface ExportPageView {
  /** The `totalCount` to report. */
  readonly totalCount: number;
  /** Served records at positions [from, to), with 0 <= from < to <= totalCount. */
  records(from: number, to: number): unknown[];
}

/** Which export window a view is for. */
export interface DataViewContext {
  stream: 'accounts' | 'surveys';
  /** Inclusive days as requested. */
  start: string;
  end: string;
  request: EmulatorRequest;
}

/**
 * Replaces the view of a window for one request; where a drift fault can add or remove records between
 * page reads (and change `totalCount` accordingly) without touching the generated data.
 */
export type DataViewHook = (view: ExportPageView, context: DataViewContext) => ExportPageView;
