import type { Day } from '../../plan/days.js';
import type { Window } from '../../plan/windows.js';
import type { MergedSpan, SpanLoadRequest } from '../destination.js';
import { historyStatements } from '../history/history-statements.js';
import { qualified, quoteIdent } from '../warehouse/identifiers.js';
import { refreshDerived, typedViewsOf } from '../derived/derived-objects.js';
import { SchemaChangeLog } from '../derived/schema-contract.js';
import { mergeStatements } from './merge-statements.js';
import { ensurePivotColumns, type PivotColumn } from './pivot-columns.js';
import type { SqlConnection } from '../warehouse/sql-connection.js';
import { byKeyRepetition, type StagedKeys } from '../staging/span-keys.js';
import {
  FIELD_REJECTS_STAGING,
  FIELD_REJECTS_TABLE,
  REJECTS_STAGING,
  REJECTS_TABLE,
  stagedRows,
} from '../staging/staging.js';
import type { TableSpec } from '../table-spec.js';
import { beginTypeEvidence } from '../derived/type-evidence.js';
import type { WarehouseDialect } from '../warehouse/warehouse-dialect.js';

/** Everything the merge of a span (one or more consecutive windows of one stream) needs. */
export interface SpanMerge extends SpanLoadRequest {
  /** The windows merged: the span's, or its first ones when the others could not be read. */
  windows: Window[];
  /** `_loaded_at` of the span's rows, ISO UTC. */
  loadedAt: string;
  /** What the span knows of the keys it staged (see `SpanKeys`). */
  keys: ReadonlyMap<string, StagedKeys>;
}

/**
 * Moves a span's staged rows into the warehouse inside the caller's transaction: new pivot columns, the merges,
 * and the span's rejects (replacing those of an earlier load of the same windows). Returns what each window
 * loaded and rejected; recording the windows is the caller's.
 */
export async function mergeSpan(
  conn: SqlConnection,
  dialect: WarehouseDialect,
  schema: string,
  span: SpanMerge,
): Promise<MergedSpan> {
  // the schema analysts read, before this commit adds to it: what the commit changes is recorded against it
  const changes = span.tables.some((spec) => spec.derived || spec.pivot)
    ? await SchemaChangeLog.begin(conn, schema, span.schemaContract ?? 'evolve')
    : undefined;
  const pivots = new Map<string, PivotColumn[]>();
  for (const spec of span.tables) {
    if (spec.pivot)
      pivots.set(
        spec.name,
        await ensurePivotColumns(conn, dialect, schema, spec, span.tables, span.runId, span.loadedAt),
      );
  }
  // the evidence typed views are decided by, from the rows the merge changes (counted before and after it)
  const evidence = await beginTypeEvidence(conn, dialect, schema, {
    tables: span.tables,
    spanStart: span.windows[0]!.start,
    spanEnd: span.windows.at(-1)!.end,
  });
  for (const statement of mergeStatements({
    dialect,
    schema,
    tables: span.tables,
    runId: span.runId,
    loadedAt: span.loadedAt,
    pivots,
    keys: span.keys,
    spanStart: span.windows[0]!.start,
    spanEnd: span.windows.at(-1)!.end,
  })) {
    await conn.run(statement.sql, statement.params);
  }
  // after the merges, in the same transaction: what the span observed, and the versions of the keys it touched
  const spanStart = span.windows[0]!.start;
  const spanEnd = span.windows.at(-1)!.end;
  for (const spec of span.tables) {
    if (!spec.history) continue;
    const ctx = {
      dialect,
      schema,
      tables: span.tables,
      spanStart,
      spanEnd,
      runId: span.runId,
      loadedAt: span.loadedAt,
    };
    for (const statement of historyStatements({ ...spec, history: spec.history }, ctx))
      await conn.run(statement.sql, statement.params);
  }
  await evidence.finish({ runId: span.runId, now: span.loadedAt });
  if (changes) {
    for (const [table, columns] of pivots)
      for (const { column, key } of columns)
        for (const object of [table, ...typedViewsOf(table)])
          changes.note(object, column, { sourceKey: key, reason: `a new key ${JSON.stringify(key)} of the source` });
    await refreshDerived(conn, dialect, schema, span, changes);
  }
  const starts = span.windows.map((w) => w.start);
  const inList = starts.map((_, i) => `CAST($${i + 3} AS DATE)`).join(', ');
  await replaceRejects(conn, schema, { ...span, windows: starts }, false);
  await conn.run(
    `DELETE FROM ${qualified(schema, FIELD_REJECTS_TABLE)} WHERE "job" = $1 AND "stream" = $2 AND "window_start" IN (${inList})`,
    [span.job, span.stream, ...starts],
  );
  await conn.run(
    `INSERT INTO ${qualified(schema, FIELD_REJECTS_TABLE)} ("job", "run_id", "stream", "window_start", "record_key", "field", "raw_value", "error", "rejected_at") ` +
      `SELECT $1, $2, $3, "_window_start", "record_key", "field", "raw_value", "error", CAST($4 AS TIMESTAMPTZ) FROM ${quoteIdent(FIELD_REJECTS_STAGING)}`,
    [span.job, span.runId, span.stream, span.loadedAt],
  );
  const loaded = await countByWindow(conn, distinctKeys(dialect, span.tables[0]!, span));
  const rejected = await countByWindow(conn, `SELECT "_window_start" FROM ${quoteIdent(REJECTS_STAGING)}`);
  const fieldsRejected = await countByWindow(conn, `SELECT "_window_start" FROM ${quoteIdent(FIELD_REJECTS_STAGING)}`);
  return { loadedAt: span.loadedAt, loaded, rejected, fieldsRejected };
}

/**
 * Puts the staged rejects of `windows` in `_etl_rejects`, in place of those an earlier load of the same windows left
 * there: the table holds what the last reading of each window rejected, however often it is read. With `onlyThese`
 * false, every staged reject goes in (a span's commit, whose staging holds only what it commits).
 */
export async function replaceRejects(
  conn: SqlConnection,
  schema: string,
  span: { job: string; stream: string; runId: string; windows: Day[]; loadedAt: string },
  onlyThese = true,
): Promise<void> {
  const inList = span.windows.map((_, i) => `CAST($${i + 3} AS DATE)`).join(', ');
  await conn.run(
    `DELETE FROM ${qualified(schema, REJECTS_TABLE)} WHERE "job" = $1 AND "stream" = $2 AND "window_start" IN (${inList})`,
    [span.job, span.stream, ...span.windows],
  );
  const staged = span.windows.map((_, i) => `CAST($${i + 5} AS DATE)`).join(', ');
  await conn.run(
    `INSERT INTO ${qualified(schema, REJECTS_TABLE)} ("job", "run_id", "stream", "window_start", "payload", "error", "rejected_at") ` +
      `SELECT $1, $2, $3, "_window_start", "payload", "error", CAST($4 AS TIMESTAMPTZ) FROM ${quoteIdent(REJECTS_STAGING)}` +
      (onlyThese ? ` WHERE "_window_start" IN (${staged})` : ''),
    [span.job, span.runId, span.stream, span.loadedAt, ...(onlyThese ? span.windows : [])],
  );
}

/**
 * `_window_start` of each distinct (window, key) of `spec`'s staged rows: the rows a window loaded. Keys the span saw
 * once need no `DISTINCT`.
 */
function distinctKeys(dialect: WarehouseDialect, spec: TableSpec, span: SpanMerge): string {
  const rows = stagedRows(dialect, spec, span.tables);
  const key = spec.key.map(quoteIdent).join(', ');
  const once = (where: string) => `SELECT "_window_start", ${key} FROM ${rows} st${where}`;
  const distinct = (from: string) => `SELECT DISTINCT "_window_start", ${key} FROM ${from} st`;
  return byKeyRepetition(dialect, spec, span.tables, span.keys, rows, once, distinct);
}

async function countByWindow(conn: SqlConnection, rowsSql: string): Promise<Map<Day, number>> {
  const rows = await conn.all<{ w: string; n: number | string }>(
    `SELECT CAST("_window_start" AS VARCHAR) AS w, COUNT(*) AS n FROM (${rowsSql}) x GROUP BY 1`,
  );
  return new Map(rows.map((r) => [r.w, Number(r.n)]));
}
