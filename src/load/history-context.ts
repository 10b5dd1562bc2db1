import type { HistorySpec, TableSpec } from './table-spec.js';
import type { WarehouseDialect } from './warehouse-dialect.js';

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

/** The data columns a history keeps: all but those it excludes (derived by the loader). */
export function keptColumns(spec: TableSpec & { history: HistorySpec }): string[] {
  const excluded = new Set(spec.history.exclude ?? []);
  return spec.columns.map((c) => c.name).filter((c) => !excluded.has(c));
}
