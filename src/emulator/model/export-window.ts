/**
 * A field a correct warehouse loads as NULL because its value cannot be read, as `_etl_field_rejects` holds it:
 * the customer whose record it is (a survey answer's key is the pipeline's own), the field's path and its raw value
 * as JSON text.
 */
export interface TruthFieldReject {
  customer_id: string;
  field: string;
  raw_value: string;
}

/**
 * What one record of an export window is, canonically: its rows, or why it must be rejected. A malformed record
 * that loads with a field NULL has rows and `fieldRejects`.
 */
export type CanonicalEntry<T> = { rows: T[]; fieldRejects?: TruthFieldReject[] } | { reason: string };

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
