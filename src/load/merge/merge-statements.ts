import { afterUpsert, beforeUpsert } from './customer-state-merge.js';
import { qualified, quoteIdent } from '../warehouse/identifiers.js';
import type { HistoryContext } from '../history/history-context.js';
import type { PivotColumn } from './pivot-columns.js';
import type { Statement } from '../warehouse/sql-connection.js';
import { byKeyRepetition, type StagedKeys } from '../staging/span-keys.js';
import { latestOrder, pivotObject, rowColumns, stagedRows } from '../staging/staging.js';
import type { TableSpec } from '../table-spec.js';

class Params {
  readonly values: unknown[] = [];
  add(value: unknown): string {
    this.values.push(value);
    return `$${this.values.length}`;
  }
}

const q = quoteIdent;

/**
 * The staged rows of `spec`, one per key: the last occurrence wins (a record seen twice in a span). Only rows whose
 * key the span saw more than once are numbered (`SpanKeys`); the rest pass as they are. Numbered rather
 * than `DISTINCT ON`: DuckDB cannot spill `DISTINCT ON` to disk, and runs out of its memory limit on the span of a
 * long backfill, while a window function spills.
 */
function latestStaged(spec: TableSpec, ctx: MergeContext): string {
  const rows = stagedRows(ctx.dialect, spec, ctx.tables);
  const key = spec.key.map(q).join(', ');
  const once = (where: string) => `SELECT *, CAST(1 AS BIGINT) AS "_latest" FROM ${rows} st${where}`;
  const latest = (from: string) =>
    `SELECT * FROM (SELECT *, row_number() OVER (PARTITION BY ${key} ORDER BY ${latestOrder(spec)}) AS "_latest" FROM ${from} st) n WHERE "_latest" = 1`;
  return `(${byKeyRepetition(ctx.dialect, spec, ctx.tables, ctx.keys, rows, once, latest)})`;
}

/**
 * Staged parent rows that win: no row of the target comes from a later window. An outer join that keeps the staged
 * rows no later target row matches (the key is never NULL): both warehouses run it as a hash anti join, where DuckDB
 * runs `NOT EXISTS` with the inequality by first copying every staged row into memory.
 */
function winnersSql(spec: TableSpec, ctx: MergeContext): string {
  const match = spec.key.map((k) => `t.${q(k)} = s.${q(k)}`).join(' AND ');
  const later = `${qualified(ctx.schema, spec.name)} t ON ${match} AND t."_window_start" > s."_window_start"`;
  // the objects of the tables staged as entries of this one, parsed once for their merges and the pivot
  return `SELECT ${ctx.dialect.withObjects('s', entriesOf(spec, ctx.tables).map(q))} FROM ${latestStaged(spec, ctx)} s LEFT JOIN ${later} WHERE t.${q(spec.key[0]!)} IS NULL`;
}

/** The staging-only JSON object columns of `spec` read by name: its pivot's, and those of tables staged as its entries. */
function entriesOf(spec: TableSpec, tables: TableSpec[]): string[] {
  const read = tables.flatMap((t) =>
    t.stagedWith?.kind === 'entries' && t.stagedWith.table === spec.name ? [t.stagedWith.column] : [],
  );
  return [...new Set([...(spec.pivot ? [pivotObject(spec)] : []), ...read])];
}

/**
 * The temp table holding the winners of a `latest-wins` table, found once per commit (before any merge
 * statement changes the targets) and read by the merges of the table and of its children.
 */
function winners(spec: TableSpec): string {
  return q(`_win_${spec.name}`);
}

/** A span's merge: what its history needs (the first and last day serve `replace-window` tables too), and more. */
export interface MergeContext extends HistoryContext {
  /** Pivot columns of each table that has a pivot, as returned by ensurePivotColumns. */
  pivots: Map<string, PivotColumn[]>;
  /** What the span knows of the keys it staged, by table name. */
  keys: ReadonlyMap<string, StagedKeys>;
}

/**
 * Statements that move one stream's staged rows into its target tables, in an order that is correct inside
 * one transaction: children of a `latest-wins` parent first (they read the parent's current versions), then
 * the parents, then plain upserts.
 */
export function mergeStatements(ctx: MergeContext): Statement[] {
  const tables = ctx.tables;
  const byName = new Map(tables.map((t) => [t.name, t]));
  const children = tables.filter((t) => t.merge.kind === 'children');
  const others = tables.filter((t) => t.merge.kind !== 'children');
  const out: Statement[] = [];
  const parents = tables.filter((t) => t.merge.kind === 'latest-wins');
  for (const parent of parents) {
    out.push({ sql: `DROP TABLE IF EXISTS ${winners(parent)}`, params: [] });
    out.push({ sql: `CREATE TEMP TABLE ${winners(parent)} AS ${winnersSql(parent, ctx)}`, params: [] });
  }
  for (const child of children) {
    const rule = child.merge as { kind: 'children'; parent: string; parentKey: string[] };
    const parent = byName.get(rule.parent);
    if (!parent) throw new Error(`table ${child.name}: parent ${rule.parent} is not loaded by the same stream`);
    out.push(...childStatements(child, parent, rule.parentKey, ctx));
  }
  for (const spec of others) {
    if (spec.merge.kind === 'replace-all')
      out.push({ sql: `DELETE FROM ${qualified(ctx.schema, spec.name)}`, params: [] });
    if (spec.merge.kind === 'replace-window') {
      out.push({
        sql: `DELETE FROM ${qualified(ctx.schema, spec.name)} WHERE "_window_start" BETWEEN CAST($1 AS DATE) AND CAST($2 AS DATE)`,
        params: [ctx.spanStart, ctx.spanEnd],
      });
    }
    out.push(...beforeUpsert(spec, ctx), ...upsertStatements(spec, ctx), ...afterUpsert(spec, ctx));
  }
  for (const parent of parents) out.push({ sql: `DROP TABLE ${winners(parent)}`, params: [] });
  return out;
}

function childStatements(child: TableSpec, parent: TableSpec, parentKey: string[], ctx: MergeContext): Statement[] {
  const target = qualified(ctx.schema, child.name);
  const w = winners(parent);
  const del = `DELETE FROM ${target} WHERE EXISTS (SELECT 1 FROM ${w} w WHERE ${parentKey.map((k, i) => `w.${q(parent.key[i]!)} = ${target}.${q(k)}`).join(' AND ')})`;
  const p = new Params();
  const cols = child.columns.map((c) => q(c.name));
  const system = ['c."_window_start"', p.add(ctx.runId), `CAST(${p.add(ctx.loadedAt)} AS TIMESTAMPTZ)`];
  const staged = child.stagedWith;
  if ((staged?.kind !== 'entries' && staged?.kind !== 'rows') || staged.table !== parent.name)
    throw new Error(`table ${child.name}: the children of ${parent.name} must be staged as its entries or rows`);
  // the entries (or rows) of the winners' own objects: the winners are the records whose children are replaced
  let from: string;
  if (staged.kind === 'rows') {
    const { copied, carried } = rowColumns(child, parent);
    from = `${ctx.dialect.arrayRows(w, ['_window_start', ...copied].map(q), `s.${q(staged.column)}`, carried)} c`;
  } else {
    const keep = [
      '_window_start',
      ...child.columns.map((c) => c.name).filter((c) => c !== staged.nameColumn && c !== staged.valueColumn),
    ].map(q);
    from = `${ctx.dialect.objectEntries(w, keep, `s.${q(staged.column)}`, q(staged.nameColumn), q(staged.valueColumn))} c`;
  }
  const ins = `INSERT INTO ${target} (${[...cols, '"_window_start"', '"_run_id"', '"_loaded_at"'].join(', ')}) SELECT ${[...child.columns.map((c) => `c.${q(c.name)}`), ...system].join(', ')} FROM ${from}`;
  return [
    { sql: del, params: [] },
    { sql: ins, params: p.values },
  ];
}

/**
 * The rows of `spec` that the staged ones replace are deleted, then the staged rows (for `latest-wins`, only the
 * winners) are inserted: a delete and an insert rather than `INSERT … ON CONFLICT DO UPDATE`, whose row-by-row
 * update path costs DuckDB many times more (a `latest-wins` loser keeps its target row: it is neither deleted nor
 * inserted). Commits of one stream take turns, so no other writer can insert the same key in between.
 */
function upsertStatements(spec: TableSpec, ctx: MergeContext): Statement[] {
  const p = new Params();
  const target = qualified(ctx.schema, spec.name);
  const source = spec.merge.kind === 'latest-wins' ? winners(spec) : latestStaged(spec, ctx);
  const pivotCols = spec.pivot ? (ctx.pivots.get(spec.name) ?? []) : [];
  const windowColumn = spec.windowless ? [] : ['_window_start'];
  const insertCols = [
    ...spec.columns.map((c) => c.name),
    ...pivotCols.map((c) => c.column),
    ...windowColumn,
    '_run_id',
    '_loaded_at',
  ];
  let from = `${source} s`;
  const pivotValues: string[] = [];
  if (spec.pivot && pivotCols.length > 0) {
    // each row's pivot values are the entries of its own staged object (parsed already in a winners table)
    const entries = pivotObject(spec);
    if (spec.merge.kind !== 'latest-wins')
      from = `(SELECT ${ctx.dialect.withObjects('src', [q(entries)])} FROM ${source} src) s`;
    for (const c of pivotCols) pivotValues.push(ctx.dialect.objectValue(`s.${q(entries)}`, p.add(c.key)));
  }
  const selectCols = [
    ...spec.columns.map((c) => `s.${q(c.name)}`),
    ...pivotValues,
    ...windowColumn.map((c) => `s.${q(c)}`),
    p.add(ctx.runId),
    `CAST(${p.add(ctx.loadedAt)} AS TIMESTAMPTZ)`,
  ];
  const match = spec.key.map((k) => `s.${q(k)} = ${target}.${q(k)}`).join(' AND ');
  // every staged key replaces its row, except where a latest-wins row came from a later window
  const replaced = spec.merge.kind === 'latest-wins' ? source : stagedRows(ctx.dialect, spec, ctx.tables);
  // a replace-window key that holds the window matches only rows of the span's windows, deleted already
  const deletedAlready =
    (spec.merge.kind === 'replace-window' && spec.key.includes('_window_start')) || spec.merge.kind === 'replace-all';
  return [
    ...(deletedAlready
      ? []
      : [{ sql: `DELETE FROM ${target} WHERE EXISTS (SELECT 1 FROM ${replaced} s WHERE ${match})`, params: [] }]),
    {
      sql: `INSERT INTO ${target} (${insertCols.map(q).join(', ')}) SELECT ${selectCols.join(', ')} FROM ${from}${ctx.dialect.insertsInKeyOrder ? ` ORDER BY ${spec.key.map((k) => `s.${q(k)}`).join(', ')}` : ''}`,
      params: p.values,
    },
  ];
}
