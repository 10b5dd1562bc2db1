import type { Day } from '../../src/plan/days.js';
import type { Window } from '../../src/plan/windows.js';
import type { Row, TableSpec } from '../../src/load/table-spec.js';

/** Rows of one table as the pipeline stages them: the source record's occurrence number, its window, the row. */
export type StagedRows = ReadonlyArray<{ seq: number; windowStart: Day; row: Row }>;

/**
 * Somewhere the replay puts normalized rows, span by span: the pipeline's loader, or a raw bulk load. Every
 * call is timed by the replay; each must have finished its database work when it resolves.
 */
export interface RowSink {
  readonly name: string;
  /**
   * What the sink is handed: rows as the pipeline stages them (`staged`: a table staged with another's rows
   * arrives inside them), or as the warehouse's tables hold them (`tables`: every table's rows on their own).
   */
  readonly takes: 'staged' | 'tables';
  /** Before the first rows of a span. */
  beginSpan(span: Window[], tables: TableSpec[]): Promise<void>;
  append(table: TableSpec, rows: StagedRows): Promise<void>;
  /** After the last rows of a span: `extracted` counts source records per window start. */
  endSpan(extracted: Map<Day, number>): Promise<void>;
  /** After the last span: whatever is still buffered is written. */
  finish(): Promise<void>;
  close(): Promise<void>;
}
