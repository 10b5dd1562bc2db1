import { UNLISTED_COLUMN, type HistorySpec, type TableSpec } from '../table-spec.js';
import type { WarehouseDialect } from '../warehouse/warehouse-dialect.js';

/** What the history statements of a span need; the span's windows are consecutive. */
export interface HistoryContext {
  dialect: WarehouseDialect;
  schema: string;
  /** Every table of the stream, those staged with another's rows included. */
  tables: TableSpec[];
  spanStart: string;
  spanEnd: string;
  runId: string;
  loadedAt: string;
}

/**
 * The data columns a history keeps: all but those it excludes (derived by the loader) and the unlisted members,
 * which are kept on the current row alone: a member the service starts sending is no change of the customer.
 */
export function keptColumns(spec: TableSpec & { history: HistorySpec }): string[] {
  const excluded = new Set([...(spec.history.exclude ?? []), UNLISTED_COLUMN.name]);
  return spec.columns.map((c) => c.name).filter((c) => !excluded.has(c));
}
