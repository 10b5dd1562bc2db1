/** What one record of an export window is, canonically. */
export type CanonicalEntry<T> = { rows: T[] } | { reason: string };

/**
 * The records an export serves for one window of days, addressable by position (0-based, in served
 * order) so that a page costs only its own records.
 */
export interface ExportWindow<T> {
  /** Number of records, malformed ones included: the export's `totalCount`. */
  readonly totalCount: number;
  /** The record at `position` exactly as served (a JSON value). */
  served(position: number): unknown;
  /** The canonical rows of a valid record, or why a malformed one must be rejected. */
  canonical(position: number): CanonicalEntry<T>;
}

/** An export that can cut windows of days. */
export interface WindowedExport<T> {
  /** The window of inclusive day indexes [first, last]. */
  window(first: number, last: number): ExportWindow<T>;
}

/** A window with no records (for ranges outside the data). */
export const EMPTY_WINDOW: ExportWindow<never> = {
  totalCount: 0,
  served: () => {
    throw new RangeError('empty window');
  },
  canonical: () => {
    throw new RangeError('empty window');
  },
};
