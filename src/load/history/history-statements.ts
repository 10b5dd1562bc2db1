import { qualified, quoteIdent } from '../warehouse/identifiers.js';
import type { Statement } from '../warehouse/sql-connection.js';
import { latestOrder, stagedRows } from '../staging/staging.js';
import { keptColumns, type HistoryContext } from './history-context.js';
import { scopedHistoryStatements } from './scoped-history-statements.js';
import type { HistorySpec, TableSpec } from '../table-spec.js';

const q = quoteIdent;

/** The temp table of the keys whose versions a commit rebuilds. */
function touchedKeys(spec: TableSpec): string {
  return q(`_hist_${spec.name}`);
}

/**
 * Statements that record what a span observed of `spec` (which declares a history) and rebuild the versions of the
 * keys it touched, inside the span's transaction and after its merges. Versions are a function of the observations
 * alone — never of the order they were loaded in: a commit rebuilds every version its observations can change, and
 * the others are the same function of the same, earlier observations.
 */
export function historyStatements(spec: TableSpec & { history: HistorySpec }, ctx: HistoryContext): Statement[] {
  const history = spec.history;
  if (history.scope) return scopedHistoryStatements({ ...spec, history: { ...history, scope: history.scope } }, ctx);
  const observations = qualified(ctx.schema, history.observations);
  const byWindow = history.observedAt === '_window_start';
  const keys = touchedKeys(spec);
  const key = spec.key.map(q).join(', ');
  const staged = stagedRows(ctx.dialect, spec, ctx.tables);
  const inSpan = `${q('_window_start')} BETWEEN CAST($1 AS DATE) AND CAST($2 AS DATE)`;
  const span = [ctx.spanStart, ctx.spanEnd];
  const out: Statement[] = [{ sql: `DROP TABLE IF EXISTS ${keys}`, params: [] }];
  // created empty, then filled: PostgreSQL takes no parameters in CREATE TABLE AS
  out.push({ sql: `CREATE TEMP TABLE ${keys} AS SELECT ${key} FROM ${staged} s WHERE 1 = 0`, params: [] });
  // a window's listing is its whole truth: a key it no longer lists loses its observation, and its versions change too
  out.push(
    byWindow
      ? {
          sql: `INSERT INTO ${keys} SELECT ${key} FROM ${staged} s UNION SELECT ${key} FROM ${observations} WHERE ${inSpan}`,
          params: span,
        }
      : { sql: `INSERT INTO ${keys} SELECT DISTINCT ${key} FROM ${staged} s`, params: [] },
  );
  out.push(
    byWindow
      ? { sql: `DELETE FROM ${observations} WHERE ${inSpan}`, params: span }
      : {
          sql: `DELETE FROM ${observations} WHERE EXISTS (SELECT 1 FROM ${staged} s WHERE ${[...spec.key, history.observedAt].map((k) => `s.${q(k)} = ${observations}.${q(k)}`).join(' AND ')})`,
          params: [],
        },
  );
  out.push(observe(spec, history, ctx));
  // Observed by window, every observation the span adds or removes counts from its first day or later: the versions
  // that ended before it are a function of earlier observations alone and stay as they are. Only those ending on or
  // after that day, or not at all, are rebuilt, so a commit writes a touched key's latest versions, not all of them.
  const since = byWindow ? ctx.spanStart : undefined;
  const versions = qualified(ctx.schema, history.table);
  out.push({
    sql:
      `DELETE FROM ${versions} WHERE EXISTS (SELECT 1 FROM ${keys} k WHERE ${match(spec.key, 'k', versions)})` +
      (since === undefined
        ? ''
        : ` AND (${versions}."valid_to" IS NULL OR ${versions}."valid_to" >= CAST($1 AS DATE))`),
    params: since === undefined ? [] : [since],
  });
  out.push(rebuild(spec, history, ctx, since));
  out.push({ sql: `DROP TABLE ${keys}`, params: [] });
  return out;
}

/** One observation per key and observation time (a record staged twice: its last occurrence), with its content hash. */
function observe(spec: TableSpec & { history: HistorySpec }, history: HistorySpec, ctx: HistoryContext): Statement {
  const objects = history.objects ?? [];
  const data = keptColumns(spec);
  const content = data.filter((c) => c !== history.observedAt);
  const partition = [...spec.key, history.observedAt].map(q).join(', ');
  // a record staged without its object has none: the same content as an empty one
  const objectValues = objects.map((o) => `COALESCE(s.${q(o.staged)}, CAST('{}' AS ${ctx.dialect.typeName('json')}))`);
  const hash = ctx.dialect.contentHash(
    content.map((c) => `s.${q(c)}`),
    objectValues,
  );
  const latest = `(SELECT *, row_number() OVER (PARTITION BY ${partition} ORDER BY ${latestOrder(spec)}) AS "_latest" FROM ${stagedRows(ctx.dialect, spec, ctx.tables)} st) s`;
  const notBefore = history.notBefore ? [history.notBefore] : [];
  const columns = [
    ...data,
    ...objects.map((o) => o.column),
    ...notBefore,
    '_window_start',
    'content_hash',
    '_run_id',
    '_loaded_at',
  ];
  const values = [
    ...data.map((c) => `s.${q(c)}`),
    ...objectValues,
    ...notBefore.map((c) => `s.${q(c)}`),
    's."_window_start"',
    hash,
    '$1',
    'CAST($2 AS TIMESTAMPTZ)',
  ];
  return {
    sql: `INSERT INTO ${qualified(ctx.schema, history.observations)} (${columns.map(q).join(', ')}) SELECT ${values.join(', ')} FROM ${latest} WHERE s."_latest" = 1`,
    params: [ctx.runId, ctx.loadedAt],
  };
}

/**
 * The versions of the touched keys from their observations, in observation order: an observation whose hash differs
 * from the one before it starts a version, which ends where the next version starts; with `since`, only those that
 * end on or after that day, or not at all. A version keeps the run and load
 * time of the observation that started it. With `notBefore`, an observation counts from the later of its time and
 * that day (and of those counting from the same day, the one loaded last), so no version starts before the source
 * says its content was set.
 */
function rebuild(
  spec: TableSpec & { history: HistorySpec },
  history: HistorySpec,
  ctx: HistoryContext,
  since: string | undefined,
): Statement {
  const objects = (history.objects ?? []).map((o) => o.column);
  const content = [...keptColumns(spec).filter((c) => c !== history.observedAt), ...objects];
  const key = spec.key.map((k) => `o.${q(k)}`).join(', ');
  const observed = `o.${q(history.observedAt)}`;
  const notBefore = history.notBefore ? `o.${q(history.notBefore)}` : undefined;
  const from = notBefore ? `CASE WHEN ${notBefore} > ${observed} THEN ${notBefore} ELSE ${observed} END` : observed;
  const table = qualified(ctx.schema, history.observations);
  const touched = `FROM ${table} o WHERE EXISTS (SELECT 1 FROM ${touchedKeys(spec)} k WHERE ${match(spec.key, 'k', 'o')})`;
  // Where the warehouse names its rows, the window functions sort the keys, times and hashes alone, and the versions
  // read their content back by row: sorting every column three times cost more than reading them again.
  const rowId = ctx.dialect.rowId;
  const carried = rowId ? `o.${rowId} AS "_row", ${key}, o."content_hash", o."_run_id", o."_loaded_at"` : 'o.*';
  const observations = notBefore
    ? `(SELECT * FROM (SELECT ${carried}, ${from} AS "_from", row_number() OVER (PARTITION BY ${key}, ${from} ORDER BY o."_loaded_at" DESC, ${observed} DESC) AS "_last" ${touched}) l WHERE "_last" = 1) o`
    : `(SELECT ${carried}, ${observed} AS "_from" ${touched}) o`;
  const changes = `SELECT o.*, LAG(o."content_hash") OVER (PARTITION BY ${key} ORDER BY o."_from") AS "_previous" FROM ${observations}`;
  const versions = `SELECT o.*, LEAD(o."_from") OVER (PARTITION BY ${key} ORDER BY o."_from") AS "_next" FROM (${changes}) o WHERE o."_previous" IS NULL OR o."_previous" <> o."content_hash"`;
  const columns = [...content, 'valid_from', 'valid_to', 'is_current', 'content_hash', '_run_id', '_loaded_at'];
  const values = [
    ...content.map((c) => `${rowId ? 'c' : 'v'}.${q(c)}`),
    'v."_from"',
    'v."_next"',
    'v."_next" IS NULL',
    'v."content_hash"',
    'v."_run_id"',
    'v."_loaded_at"',
  ];
  const source = rowId ? `(${versions}) v JOIN ${table} c ON c.${rowId} = v."_row"` : `(${versions}) v`;
  const kept = since === undefined ? '' : ` WHERE v."_next" IS NULL OR v."_next" >= CAST($1 AS DATE)`;
  return {
    sql: `INSERT INTO ${qualified(ctx.schema, history.table)} (${columns.map(q).join(', ')}) SELECT ${values.join(', ')} FROM ${source}${kept}`,
    params: since === undefined ? [] : [since],
  };
}

function match(key: string[], a: string, b: string): string {
  return key.map((k) => `${a}.${q(k)} = ${b}.${q(k)}`).join(' AND ');
}
