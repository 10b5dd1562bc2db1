import type { DuckDBAppender, DuckDBConnection } from '@duckdb/node-api';
import type { Day } from '../../plan/days.js';
import type { Window } from '../../plan/windows.js';
import { mergeSpan, replaceRejects } from '../merge/merge-span.js';
import type { FieldReject, SpanLoadRequest, SpanTransaction } from '../destination.js';
import type { ReleasableSpanLoad } from '../released-span-load.js';
import { quoteIdent } from '../warehouse/identifiers.js';
import type { Mutex } from '../warehouse/mutex.js';
import {
  createStagingSql,
  DUPLICATES_STAGING,
  FIELD_REJECTS_STAGING,
  FIELD_REJECTS_TABLE,
  REJECTS_STAGING,
  REJECTS_TABLE,
  spanStagingTables,
  stagingName,
} from '../staging/staging.js';
import type { ColumnSpec, Row } from '../table-spec.js';
import { duckdbDialect } from '../warehouse/warehouse-dialect.js';
import { DuckDbSqlConnection } from './duckdb-connection.js';
import type { DeferredVacuum } from './deferred-vacuum.js';
import type { PoolTrim } from './pool-trim.js';
import { SpanKeys } from '../staging/span-keys.js';

interface Staged {
  name: string;
  columns: ColumnSpec[];
  appender?: DuckDBAppender;
  /** Rows appended since the appender last flushed. */
  unflushed: number;
}

/**
 * An appender hands its rows to the staging table every this many rows (and at the commit): a flush has a cost
 * of its own that pages of a few hundred rows would pay each time, while rows in between wait in DuckDB's
 * memory, not in JavaScript's.
 */
const FLUSH_ROWS = 20_000;

/**
 * A span staged in DuckDB temp tables through the appender (values appended as text: DuckDB casts them, the
 * fastest path measured, and flushed every {@link FLUSH_ROWS} rows), merged under the destination's commit lock
 * so that spans loaded in parallel commit one after the other.
 */
export class DuckDbSpanLoad implements ReleasableSpanLoad {
  private readonly conn: DuckDbSqlConnection;
  private readonly staged = new Map<string, Staged>();
  private readonly keys: SpanKeys;

  private constructor(
    private readonly raw: DuckDBConnection,
    private readonly schema: string,
    private readonly request: SpanLoadRequest,
    private readonly commitLock: Mutex,
    private readonly vacuum: DeferredVacuum,
    private readonly pool: PoolTrim,
  ) {
    this.conn = new DuckDbSqlConnection(raw, schema, pool);
    this.keys = new SpanKeys(request.tables);
  }

  static async open(
    raw: DuckDBConnection,
    schema: string,
    request: SpanLoadRequest,
    commitLock: Mutex,
    vacuum: DeferredVacuum,
    pool: PoolTrim,
  ): Promise<DuckDbSpanLoad> {
    const load = new DuckDbSpanLoad(raw, schema, request, commitLock, vacuum, pool);
    const { appended, all } = spanStagingTables(request.tables);
    for (const t of all) {
      await load.conn.run(`DROP TABLE IF EXISTS temp.main.${quoteIdent(t.name)}`);
      await load.conn.run(createStagingSql(duckdbDialect, t.name, t.columns));
    }
    for (const t of appended) load.staged.set(t.name, { ...t, unflushed: 0 });
    return load;
  }

  async append(table: string, rows: ReadonlyArray<{ seq: number; windowStart: Day; row: Row }>): Promise<void> {
    const staged = this.staged.get(stagingName(table));
    if (!staged)
      throw new Error(`no staging table for ${table} (a table staged with another's rows is never appended to)`);
    this.keys.add(table, rows);
    const appender = await this.appenderOf(staged);
    const dataColumns = staged.columns.slice(2);
    await this.pool.withoutTrim(() => {
      try {
        for (const { seq, windowStart, row } of rows) {
          appender.appendBigInt(BigInt(seq));
          appender.appendVarchar(windowStart);
          for (const c of dataColumns) appendValue(appender, row[c.name]);
          appender.endRow();
        }
      } catch (error) {
        throw withMemoryHint(error);
      }
      this.flushEvery(staged, rows.length);
    });
  }

  async reject(rows: ReadonlyArray<{ windowStart: Day; payload: string; error: string }>): Promise<void> {
    if (rows.length === 0) return;
    const staged = this.staged.get(REJECTS_STAGING)!;
    const appender = await this.appenderOf(staged);
    await this.pool.withoutTrim(() => {
      for (const r of rows) {
        appender.appendVarchar(r.windowStart);
        appender.appendVarchar(r.payload);
        appender.appendVarchar(r.error);
        appender.endRow();
      }
      this.flushEvery(staged, rows.length);
    });
  }

  async rejectFields(rows: ReadonlyArray<FieldReject>): Promise<void> {
    if (rows.length === 0) return;
    const staged = this.staged.get(FIELD_REJECTS_STAGING)!;
    const appender = await this.appenderOf(staged);
    await this.pool.withoutTrim(() => {
      for (const r of rows) {
        appender.appendVarchar(r.windowStart);
        appender.appendVarchar(r.recordKey);
        appender.appendVarchar(r.field);
        if (r.rawValue === null) appender.appendNull();
        else appender.appendVarchar(r.rawValue);
        appender.appendVarchar(r.error);
        appender.endRow();
      }
      this.flushEvery(staged, rows.length);
    });
  }

  async reset(windowStart?: Day): Promise<void> {
    this.keys.forget();
    await this.pool.withoutTrim(() => this.closeAppenders());
    for (const t of this.staged.values()) {
      if (windowStart === undefined) await this.conn.run(`DELETE FROM temp.main.${quoteIdent(t.name)}`);
      else
        await this.conn.run(`DELETE FROM temp.main.${quoteIdent(t.name)} WHERE "_window_start" = CAST($1 AS DATE)`, [
          windowStart,
        ]);
    }
  }

  async commit<T>(windows: Window[], work: SpanTransaction<T>): Promise<T> {
    try {
      // closing flushes what the appenders hold
      await this.pool.withoutTrim(() => this.closeAppenders());
      await this.stageDuplicates();
      // a history's tables lose rows at every commit too: its versions are rebuilt, a re-loaded window's observations replaced
      const histories = this.request.tables.flatMap((t) =>
        t.history
          ? [t.history.table, t.history.observations, ...(t.history.scope ? [t.history.scope.observations] : [])]
          : [],
      );
      const written = [...this.request.tables.map((t) => t.name), ...histories, REJECTS_TABLE, FIELD_REJECTS_TABLE];
      const span = { ...this.request, windows, loadedAt: new Date().toISOString(), keys: this.keys.states() };
      return await this.commitLock.run(async () => {
        const result = await this.vacuum.commit(this.conn, this.schema, written, () =>
          this.conn.transaction(() => work(this.conn, () => mergeSpan(this.conn, duckdbDialect, this.schema, span))),
        );
        await this.pool.trim(this.raw);
        return result;
      });
    } catch (error) {
      throw withMemoryHint(error);
    }
  }

  async keepRejects(windows: Day[]): Promise<void> {
    await this.pool.withoutTrim(() => this.closeAppenders());
    const span = { ...this.request, windows, loadedAt: new Date().toISOString() };
    await this.commitLock.run(() => this.conn.transaction(() => replaceRejects(this.conn, this.schema, span)));
  }

  async abort(): Promise<void> {
    await this.pool.withoutTrim(() => this.closeAppenders());
  }

  /** Drops the staging tables and closes the connection. */
  async release(): Promise<void> {
    await this.pool.withoutTrim(() => {
      try {
        this.closeAppenders();
      } catch {
        // rows an appender could not flush are dropped with its table
      }
    });
    for (const { name } of spanStagingTables(this.request.tables).all)
      await this.conn.run(`DROP TABLE IF EXISTS temp.main.${quoteIdent(name)}`).catch(() => undefined);
    this.raw.closeSync();
  }

  /** The rows whose key the span may have staged twice, for the merge to find the latest of each. */
  private async stageDuplicates(): Promise<void> {
    await this.conn.run(`DELETE FROM temp.main.${quoteIdent(DUPLICATES_STAGING)}`);
    const appender = await this.pool.statement(() => this.raw.createAppender(DUPLICATES_STAGING, 'main', 'temp'));
    await this.pool.withoutTrim(() => {
      try {
        for (const [table, seq] of this.keys.listed()) {
          appender.appendVarchar(table);
          appender.appendBigInt(BigInt(seq));
          appender.endRow();
        }
      } finally {
        appender.closeSync();
      }
    });
  }

  private async appenderOf(staged: Staged): Promise<DuckDBAppender> {
    staged.appender ??= await this.pool.statement(() => this.raw.createAppender(staged.name, 'main', 'temp'));
    return staged.appender;
  }

  private flushEvery(staged: Staged, appended: number): void {
    staged.unflushed += appended;
    if (staged.unflushed < FLUSH_ROWS) return;
    try {
      staged.appender!.flushSync();
    } catch (error) {
      throw withMemoryHint(error);
    }
    staged.unflushed = 0;
  }

  /** Closing an appender flushes what it still holds. */
  private closeAppenders(): void {
    for (const t of this.staged.values()) {
      t.appender?.closeSync();
      t.appender = undefined;
      t.unflushed = 0;
    }
  }
}

function appendValue(appender: DuckDBAppender, value: string | number | null | undefined): void {
  if (value === null || value === undefined) appender.appendNull();
  else appender.appendVarchar(typeof value === 'string' ? value : String(value));
}

/**
 * DuckDB's out-of-memory error with what to do about it here: its own advice (`SET memory_limit`) is not
 * something a user of the pipeline can do, the jobs file is.
 */
export function withMemoryHint(error: unknown): unknown {
  if (!(error instanceof Error) || !/Out of Memory Error|(could not|failed to) allocate/.test(error.message))
    return error;
  return new Error(`${error.message.split('\n')[0]} — raise destination.memory_limit in the jobs file`, {
    cause: error,
  });
}
