/** Column types both warehouses share; each destination maps them to its own type names. */
export type ColumnType = 'text' | 'date' | 'timestamptz' | 'decimal' | 'integer' | 'boolean' | 'json';

export interface ColumnSpec {
  name: string;
  type: ColumnType;
}

/**
 * How a staged table reaches its target inside the window's transaction.
 * - `latest-wins`: upsert on the key, but never over a row loaded from a later window (`_window_start`).
 * - `upsert`: plain upsert on the key.
 * - `replace-window`: the span's windows hold exactly what was staged: rows loaded earlier from the same
 *   windows are deleted first (a listing filtered by window is the whole truth of that window).
 * - `children`: rows owned by a `latest-wins` parent; for every parent row the window wins, the old
 *   children are deleted and the staged ones inserted (so a removed custom field disappears).
 */
export type MergeRule =
  | { kind: 'latest-wins' }
  | { kind: 'upsert' }
  | { kind: 'replace-window' }
  | { kind: 'children'; parent: string; parentKey: string[] };

/** One column per distinct value of a child's `nameColumn`, named `prefix + sanitized name`, text-typed. */
export interface PivotSpec {
  prefix: string;
  child: string;
  nameColumn: string;
  valueColumn: string;
}

/** A warehouse table a stream writes: its key, its data columns and how its rows merge. */
export interface TableSpec {
  name: string;
  key: string[];
  /** Data columns, key included; the system columns `_window_start`, `_run_id`, `_loaded_at` are added by the loader. */
  columns: ColumnSpec[];
  merge: MergeRule;
  pivot?: PivotSpec;
}

/** A row as the transform hands it to the loader: column name → value already in its final text form. */
export type Row = Record<string, string | number | null>;

/** Columns every target table carries besides its data columns. */
export const SYSTEM_COLUMNS: ColumnSpec[] = [
  { name: '_window_start', type: 'date' },
  { name: '_run_id', type: 'text' },
  { name: '_loaded_at', type: 'timestamptz' },
];
