import { qualified, quoteIdent } from './identifiers.js';
import type { PivotColumn } from './pivot-columns.js';
import { stagingName } from './staging.js';
import type { TableSpec } from './table-spec.js';

/** An SQL statement with its `$n` parameters. */
export interface Statement {
  sql: string;
  params: unknown[];
}

class Params {
  readonly values: unknown[] = [];
  add(value: unknown): string {
    this.values.push(value);
    return `$${this.values.length}`;
  }
}

const q = quoteIdent;

/**
 * The staged rows of `spec`, one per key: the last occurrence wins (a record seen twice in a span). Numbered
 * rather than `DISTINCT ON`: DuckDB cannot spill `DISTINCT ON` to disk, and runs out of its memory limit on the
 * span of a long backfill, while a window function spills.
 */
function latestStaged(spec: TableSpec): string {
  const key = spec.key.map(q).join(', ');
  const numbered = `SELECT *, row_number() OVER (PARTITION BY ${key} ORDER BY "_seq" DESC) AS "_latest" FROM ${q(stagingName(spec.name))}`;
  return `(SELECT * FROM (${numbered}) n WHERE "_latest" = 1)`;
}

/** Staged parent rows that win: no row of the target comes from a later window. */
function winnersSql(schema: string, spec: TableSpec): string {
  const match = spec.key.map((k) => `t.${q(k)} = s.${q(k)}`).join(' AND ');
  return `SELECT s.* FROM ${latestStaged(spec)} s WHERE NOT EXISTS (SELECT 1 FROM ${qualified(schema, spec.name)} t WHERE ${match} AND t."_window_start" > s."_window_start")`;
}

/**
 * The temp table holding the winners of a `latest-wins` table, found once per commit (before any merge
 * statement changes the targets) and read by the merges of the table and of its children.
 */
function winners(spec: TableSpec): string {
  return q(`_win_${spec.name}`);
}

export interface MergeContext {
  schema: string;
  /** First and last day of the span, for `replace-window` tables. */
  spanStart: string;
  spanEnd: string;
  runId: string;
  loadedAt: string;
  /** Pivot columns of each table that has a pivot, as returned by ensurePivotColumns. */
  pivots: Map<string, PivotColumn[]>;
}

/**
 * Statements that move one stream's staged rows into its target tables, in an order that is correct inside
 * one transaction: children of a `latest-wins` parent first (they read the parent's current versions), then
 * the parents, then plain upserts.
 */
export function mergeStatements(tables: TableSpec[], ctx: MergeContext): Statement[] {
  const byName = new Map(tables.map((t) => [t.name, t]));
  const children = tables.filter((t) => t.merge.kind === 'children');
  const others = tables.filter((t) => t.merge.kind !== 'children');
  const out: Statement[] = [];
  const parents = tables.filter((t) => t.merge.kind === 'latest-wins');
  for (const parent of parents) {
    out.push({ sql: `DROP TABLE IF EXISTS ${winners(parent)}`, params: [] });
    out.push({ sql: `CREATE TEMP TABLE ${winners(parent)} AS ${winnersSql(ctx.schema, parent)}`, params: [] });
  }
  for (const child of children) {
    const rule = child.merge as { kind: 'children'; parent: string; parentKey: string[] };
    const parent = byName.get(rule.parent);
    if (!parent) throw new Error(`table ${child.name}: parent ${rule.parent} is not loaded by the same stream`);
    out.push(...childStatements(child, parent, rule.parentKey, ctx));
  }
  for (const spec of others) {
    if (spec.merge.kind === 'replace-window') {
      out.push({
        sql: `DELETE FROM ${qualified(ctx.schema, spec.name)} WHERE "_window_start" BETWEEN CAST($1 AS DATE) AND CAST($2 AS DATE)`,
        params: [ctx.spanStart, ctx.spanEnd],
      });
    }
    out.push(...upsertStatements(spec, ctx));
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
  const ins =
    `INSERT INTO ${target} (${[...cols, '"_window_start"', '"_run_id"', '"_loaded_at"'].join(', ')}) ` +
    `SELECT ${[...child.columns.map((c) => `c.${q(c.name)}`), 'w."_window_start"', p.add(ctx.runId), `CAST(${p.add(ctx.loadedAt)} AS TIMESTAMPTZ)`].join(', ')} ` +
    // a child row belongs to the record of its `_seq`, whose key it carries
    `FROM ${q(stagingName(child.name))} c JOIN ${w} w ON w."_seq" = c."_seq"`;
  return [
    { sql: del, params: [] },
    { sql: ins, params: p.values },
  ];
}

/**
 * The rows of `spec` that the staged ones replace are deleted, then the staged rows (for `latest-wins`, only the
 * winners) are inserted: a delete and an insert rather than `INSERT … ON CONFLICT DO UPDATE`, whose row-by-row
 * update path costs DuckDB ten times more (a `latest-wins` loser keeps its target row: it is neither deleted nor
 * inserted). Commits of one stream take turns, so no other writer can insert the same key in between.
 */
function upsertStatements(spec: TableSpec, ctx: MergeContext): Statement[] {
  const p = new Params();
  const target = qualified(ctx.schema, spec.name);
  const source = spec.merge.kind === 'latest-wins' ? winners(spec) : latestStaged(spec);
  const pivotCols = spec.pivot ? (ctx.pivots.get(spec.name) ?? []) : [];
  const insertCols = [...spec.columns.map((c) => c.name), ...pivotCols.map((c) => c.column), '_window_start', '_run_id', '_loaded_at'];
  const selectCols = [
    ...spec.columns.map((c) => `s.${q(c.name)}`),
    ...pivotCols.map((c) => `pv.${q(c.column)}`),
    's."_window_start"',
    p.add(ctx.runId),
    `CAST(${p.add(ctx.loadedAt)} AS TIMESTAMPTZ)`,
  ];
  let from = `${source} s`;
  if (spec.pivot && pivotCols.length > 0) {
    const pv = spec.pivot;
    // the pivot of each record's child rows (one `_seq` per record)
    const aggregates = pivotCols.map((c) => `MAX(CASE WHEN ${q(pv.nameColumn)} = ${p.add(c.key)} THEN ${q(pv.valueColumn)} END) AS ${q(c.column)}`);
    const pivotSql = `(SELECT ${['"_seq"', ...aggregates].join(', ')} FROM ${q(stagingName(pv.child))} GROUP BY "_seq")`;
    from += ` LEFT JOIN ${pivotSql} pv ON pv."_seq" = s."_seq"`;
  }
  const match = spec.key.map((k) => `s.${q(k)} = ${target}.${q(k)}`).join(' AND ');
  // every staged key replaces its row, except where a latest-wins row came from a later window
  const replaced = spec.merge.kind === 'latest-wins' ? source : q(stagingName(spec.name));
  return [
    { sql: `DELETE FROM ${target} WHERE EXISTS (SELECT 1 FROM ${replaced} s WHERE ${match})`, params: [] },
    { sql: `INSERT INTO ${target} (${insertCols.map(q).join(', ')}) SELECT ${selectCols.join(', ')} FROM ${from}`, params: p.values },
  ];
}
