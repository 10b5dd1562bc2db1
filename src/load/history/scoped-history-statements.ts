import { keptColumns, type HistoryContext } from './history-context.js';
import { qualified, quoteIdent as q } from '../warehouse/identifiers.js';
import type { Statement } from '../warehouse/sql-connection.js';
import { stagedRows } from '../staging/staging.js';
import type { HistoryScope, HistorySpec, TableSpec } from '../table-spec.js';

type ScopedSpec = TableSpec & { history: HistorySpec & { scope: HistoryScope } };

/** The temp table of the scope observations a span staged for `spec`. */
function asked(spec: TableSpec): string {
  return q(`_hscope_${spec.name}`);
}

/**
 * The history statements of a table observed per scope (see `HistoryScope`): record the scopes the span observed and
 * every key present in each, then rebuild the versions of all keys of those scopes from all of their scopes'
 * observations. An observation of a scope replaces what an earlier load of the same observation recorded, so a
 * re-load adds nothing; versions depend on the observations alone, never on the order they were loaded in.
 */
export function scopedHistoryStatements(spec: ScopedSpec, ctx: HistoryContext): Statement[] {
  const { history } = spec;
  const { scope } = history;
  const at = q(history.observedAt);
  const scopeLog = qualified(ctx.schema, scope.observations);
  const observations = qualified(ctx.schema, history.observations);
  const versions = qualified(ctx.schema, history.table);
  const observedIn = ctx.tables.find((t) => t.name === scope.observedIn);
  if (!observedIn) throw new Error(`table ${spec.name}: ${scope.observedIn} is not loaded by the same stream`);
  const scopeColumns = scope.columns.map(q).join(', ');
  const onScope = (a: string, b: string) => match(scope.columns, a, b);
  const sameObservation = (a: string, b: string) => `${onScope(a, b)} AND ${a}.${at} = ${b}.${at}`;
  const run = [ctx.runId, ctx.loadedAt];
  return [
    { sql: `DROP TABLE IF EXISTS ${asked(spec)}`, params: [] },
    // an unaskable customer was not observed: its keys are unknown, not absent
    {
      sql: `CREATE TEMP TABLE ${asked(spec)} AS SELECT DISTINCT ${[...scope.columns, history.observedAt].map((c) => `o.${q(c)}`).join(', ')} FROM ${stagedRows(ctx.dialect, observedIn, ctx.tables)} o WHERE o."outcome" <> 'unaskable'`,
      params: [],
    },
    // the histories of a stream share the scope log: each of them records the same rows, once
    {
      sql: `DELETE FROM ${scopeLog} WHERE EXISTS (SELECT 1 FROM ${asked(spec)} a WHERE ${sameObservation('a', scopeLog)})`,
      params: [],
    },
    {
      sql: `INSERT INTO ${scopeLog} (${scopeColumns}, ${at}, "_run_id", "_loaded_at") SELECT ${scopeColumns}, ${at}, $1, CAST($2 AS TIMESTAMPTZ) FROM ${asked(spec)}`,
      params: run,
    },
    // an observation of a scope is the whole truth of that scope at that instant
    {
      sql: `DELETE FROM ${observations} WHERE EXISTS (SELECT 1 FROM ${asked(spec)} a WHERE ${sameObservation('a', observations)})`,
      params: [],
    },
    observe(spec, ctx),
    {
      sql: `DELETE FROM ${versions} WHERE EXISTS (SELECT 1 FROM ${asked(spec)} a WHERE ${onScope('a', versions)})`,
      params: [],
    },
    rebuild(spec, ctx),
    { sql: `DROP TABLE ${asked(spec)}`, params: [] },
  ];
}

/** The content a version compares and keeps: the kept data columns but the observation time. */
function contentColumns(spec: ScopedSpec): string[] {
  return keptColumns(spec).filter((c) => c !== spec.history.observedAt);
}

/** One observation per key present in a scope observation (a key staged twice: its last occurrence), at the scope's instant. */
function observe(spec: ScopedSpec, ctx: HistoryContext): Statement {
  const { history } = spec;
  const content = contentColumns(spec);
  const hash = ctx.dialect.contentHash(
    content.map((c) => `s.${q(c)}`),
    [],
  );
  const latest = `(SELECT *, row_number() OVER (PARTITION BY ${spec.key.map(q).join(', ')} ORDER BY "_seq" DESC) AS "_latest" FROM ${stagedRows(ctx.dialect, spec, ctx.tables)} st) s`;
  const columns = [...content, history.observedAt, '_window_start', 'content_hash', '_run_id', '_loaded_at'];
  const values = [
    ...content.map((c) => `s.${q(c)}`),
    `a.${q(history.observedAt)}`,
    's."_window_start"',
    hash,
    '$1',
    'CAST($2 AS TIMESTAMPTZ)',
  ];
  return {
    sql:
      `INSERT INTO ${qualified(ctx.schema, history.observations)} (${columns.map(q).join(', ')}) SELECT ${values.join(', ')} ` +
      `FROM ${latest} JOIN ${asked(spec)} a ON ${match(history.scope.columns, 'a', 's')} WHERE s."_latest" = 1`,
    params: [ctx.runId, ctx.loadedAt],
  };
}

/**
 * The versions of every key of the scopes the span observed. Each key is followed along all observations of its
 * scope: present with a content hash, or absent. A present state that differs from the one before starts a version,
 * which ends at the next change — a different content or the key's absence. A version keeps the run and load time of
 * the observation that started it.
 */
function rebuild(spec: ScopedSpec, ctx: HistoryContext): Statement {
  const { history } = spec;
  const { scope } = history;
  const at = q(history.observedAt);
  const content = contentColumns(spec);
  const observations = qualified(ctx.schema, history.observations);
  const byKey = spec.key.map((k) => `g.${q(k)}`).join(', ');
  const keys = `SELECT DISTINCT ${spec.key.map((k) => `o.${q(k)}`).join(', ')} FROM ${observations} o WHERE EXISTS (SELECT 1 FROM ${asked(spec)} a WHERE ${match(scope.columns, 'a', 'o')})`;
  const fromObservation = content.map((c) => (spec.key.includes(c) ? `k.${q(c)}` : `o.${q(c)}`));
  // every key against every observation of its scope; a key the observation lacks has no hash there
  const grid =
    `SELECT ${[...fromObservation, `l.${at} AS "_at"`, 'o."content_hash" AS "_hash"', 'o."_run_id"', 'o."_loaded_at"'].join(', ')} ` +
    `FROM (${keys}) k JOIN ${qualified(ctx.schema, scope.observations)} l ON ${match(scope.columns, 'k', 'l')} ` +
    `LEFT JOIN ${observations} o ON ${match(spec.key, 'k', 'o')} AND o.${at} = l.${at}`;
  const states =
    `SELECT g.*, LAG(g."_hash") OVER (PARTITION BY ${byKey} ORDER BY g."_at") AS "_previous", ` +
    `row_number() OVER (PARTITION BY ${byKey} ORDER BY g."_at") AS "_n" FROM (${grid}) g`;
  const changes =
    `SELECT g.*, LEAD(g."_at") OVER (PARTITION BY ${byKey} ORDER BY g."_at") AS "_next" FROM (${states}) g ` +
    `WHERE g."_n" = 1 OR g."_previous" IS DISTINCT FROM g."_hash"`;
  const columns = [...content, 'valid_from', 'valid_to', 'is_current', 'content_hash', '_run_id', '_loaded_at'];
  const values = [
    ...content.map((c) => `v.${q(c)}`),
    'v."_at"',
    'v."_next"',
    'v."_next" IS NULL',
    'v."_hash"',
    'v."_run_id"',
    'v."_loaded_at"',
  ];
  return {
    sql: `INSERT INTO ${qualified(ctx.schema, history.table)} (${columns.map(q).join(', ')}) SELECT ${values.join(', ')} FROM (${changes}) v WHERE v."_hash" IS NOT NULL`,
    params: [],
  };
}

function match(columns: readonly string[], a: string, b: string): string {
  return columns.map((c) => `${a}.${q(c)} = ${b}.${q(c)}`).join(' AND ');
}
