import { keptColumns, type HistoryContext } from './history-context.js';
import { qualified, quoteIdent as q } from '../warehouse/identifiers.js';
import type { Statement } from '../warehouse/sql-connection.js';
import { stagedRows } from '../staging/staging.js';
import type { HistoryScope, HistorySpec, TableSpec } from '../table-spec.js';

type ScopedSpec = TableSpec & { history: HistorySpec & { scope: HistoryScope } };

/** The observations table's column closing a run: the last ask of the run's scope that found the key with its content. */
export const LAST_OBSERVED_AT = 'last_observed_at';

/** The temp table of the scope observations a span staged for `spec`. */
function asked(spec: TableSpec): string {
  return q(`_hscope_${spec.name}`);
}

/** The temp table of every observation of the asked scopes, one row per key and ask, as the runs stand for them. */
function perAsk(spec: TableSpec): string {
  return q(`_hasks_${spec.name}`);
}

/**
 * The history statements of a table observed per scope (see `HistoryScope`): record the scopes the span observed and
 * every key present in each, then rebuild the versions of all keys of those scopes from all of their scopes'
 * observations. An observation of a scope replaces what an earlier load of the same observation recorded, so a
 * re-load adds nothing; versions depend on the observations alone, never on the order they were loaded in.
 *
 * The observations table holds runs, not asks: a row is a key's content from one ask of its scope (`observedAt`)
 * through a later one ({@link LAST_OBSERVED_AT}), every ask of the scope between them having found the key with that
 * content; the scope log keeps every ask. So a customer asked night after night with the same state adds a row to
 * the scope log and none here. Each commit spreads the runs of the scopes it asked back over their asks, puts its
 * own observations in place of those of the same asks, and writes the runs again: the versions are rebuilt from
 * exactly the observations an uncompacted table would hold, and an ask arriving late inside a run splits it where
 * the asks around it say.
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
  const content = contentColumns(spec);
  const rowColumns = [...content, history.observedAt, '_window_start', 'content_hash', '_run_id', '_loaded_at'];
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
    { sql: `DROP TABLE IF EXISTS ${perAsk(spec)}`, params: [] },
    {
      sql: `CREATE TEMP TABLE ${perAsk(spec)} AS SELECT ${rowColumns.map(q).join(', ')} FROM ${observations} WHERE 1 = 0`,
      params: [],
    },
    // the runs of the asked scopes over the asks they cover, but the asks this span observed again
    {
      sql:
        `INSERT INTO ${perAsk(spec)} (${rowColumns.map(q).join(', ')}) ` +
        `SELECT ${[...content.map((c) => `o.${q(c)}`), `l.${at}`, 'o."_window_start"', 'o."content_hash"', 'l."_run_id"', 'l."_loaded_at"'].join(', ')} ` +
        `FROM ${observations} o JOIN ${scopeLog} l ON ${onScope('l', 'o')} AND l.${at} BETWEEN o.${at} AND o.${q(LAST_OBSERVED_AT)} ` +
        `WHERE EXISTS (SELECT 1 FROM ${asked(spec)} a WHERE ${onScope('a', 'o')}) ` +
        `AND NOT EXISTS (SELECT 1 FROM ${asked(spec)} a WHERE ${sameObservation('a', 'l')})`,
      params: [],
    },
    // an observation of a scope is the whole truth of that scope at that instant
    observe(spec, ctx),
    {
      sql: `DELETE FROM ${observations} WHERE EXISTS (SELECT 1 FROM ${asked(spec)} a WHERE ${onScope('a', observations)})`,
      params: [],
    },
    compact(spec, ctx),
    {
      sql: `DELETE FROM ${versions} WHERE EXISTS (SELECT 1 FROM ${asked(spec)} a WHERE ${onScope('a', versions)})`,
      params: [],
    },
    rebuild(spec, ctx),
    { sql: `DROP TABLE ${perAsk(spec)}`, params: [] },
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
      `INSERT INTO ${perAsk(spec)} (${columns.map(q).join(', ')}) SELECT ${values.join(', ')} ` +
      `FROM ${latest} JOIN ${asked(spec)} a ON ${match(history.scope.columns, 'a', 's')} WHERE s."_latest" = 1`,
    params: [ctx.runId, ctx.loadedAt],
  };
}

/**
 * The observations of the asked scopes written back as runs: a key's observations at consecutive asks of its scope
 * with the same content hash are one row, from the first of them (its content, window, run and load time) through
 * the last. An ask that did not find the key, or found another content, ends a run.
 */
function compact(spec: ScopedSpec, ctx: HistoryContext): Statement {
  const { history } = spec;
  const { scope } = history;
  const at = q(history.observedAt);
  const byKey = spec.key.map((k) => `e.${q(k)}`).join(', ');
  const content = contentColumns(spec);
  const columns = [...content, history.observedAt, '_window_start', 'content_hash', '_run_id', '_loaded_at'];
  // each ask's place among its scope's asks, so that consecutive asks are told from asks with a gap between them
  const ordinals =
    `SELECT ${scope.columns.map((c) => `l.${q(c)}`).join(', ')}, l.${at}, row_number() OVER (PARTITION BY ${scope.columns.map((c) => `l.${q(c)}`).join(', ')} ORDER BY l.${at}) AS "_n" ` +
    `FROM ${qualified(ctx.schema, scope.observations)} l WHERE EXISTS (SELECT 1 FROM ${asked(spec)} a WHERE ${match(scope.columns, 'a', 'l')})`;
  const placed =
    `SELECT e.*, n."_n", LAG(n."_n") OVER (PARTITION BY ${byKey} ORDER BY e.${at}) AS "_previous_n", ` +
    `LAG(e."content_hash") OVER (PARTITION BY ${byKey} ORDER BY e.${at}) AS "_previous_hash" ` +
    `FROM ${perAsk(spec)} e JOIN (${ordinals}) n ON ${match(scope.columns, 'n', 'e')} AND n.${at} = e.${at}`;
  const runs =
    `SELECT e.*, SUM(CASE WHEN e."_previous_n" = e."_n" - 1 AND e."_previous_hash" = e."content_hash" THEN 0 ELSE 1 END) ` +
    `OVER (PARTITION BY ${byKey} ORDER BY e.${at} ROWS UNBOUNDED PRECEDING) AS "_run" FROM (${placed}) e`;
  const ends =
    `SELECT e.*, row_number() OVER (PARTITION BY ${byKey}, e."_run" ORDER BY e.${at}) AS "_first", ` +
    `MAX(e.${at}) OVER (PARTITION BY ${byKey}, e."_run") AS "_last" FROM (${runs}) e`;
  return {
    sql:
      `INSERT INTO ${qualified(ctx.schema, history.observations)} (${[...columns, LAST_OBSERVED_AT].map(q).join(', ')}) ` +
      `SELECT ${[...columns.map((c) => `r.${q(c)}`), 'r."_last"'].join(', ')} FROM (${ends}) r WHERE r."_first" = 1`,
    params: [],
  };
}

/**
 * The versions of every key of the scopes the span observed, from their observations ask by ask. Each key is
 * followed along all asks of its scope: present with a content hash, or absent. A present state that differs from
 * the one before starts a version, which ends at the next change — a different content or the key's absence. A
 * version keeps the run and load time of the ask that started it.
 */
function rebuild(spec: ScopedSpec, ctx: HistoryContext): Statement {
  const { history } = spec;
  const { scope } = history;
  const at = q(history.observedAt);
  const content = contentColumns(spec);
  const byKey = spec.key.map((k) => `g.${q(k)}`).join(', ');
  const keys = `SELECT DISTINCT ${spec.key.map((k) => `o.${q(k)}`).join(', ')} FROM ${perAsk(spec)} o`;
  const fromObservation = content.map((c) => (spec.key.includes(c) ? `k.${q(c)}` : `o.${q(c)}`));
  // every key against every ask of its scope; a key the ask did not find has no hash there
  const grid =
    `SELECT ${[...fromObservation, `l.${at} AS "_at"`, 'o."content_hash" AS "_hash"', 'o."_run_id"', 'o."_loaded_at"'].join(', ')} ` +
    `FROM (${keys}) k JOIN ${qualified(ctx.schema, scope.observations)} l ON ${match(scope.columns, 'k', 'l')} ` +
    `LEFT JOIN ${perAsk(spec)} o ON ${match(spec.key, 'k', 'o')} AND o.${at} = l.${at}`;
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
