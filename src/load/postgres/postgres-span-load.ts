import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { PoolClient } from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import type { Day } from '../../plan/days.js';
import type { Window } from '../../plan/windows.js';
import { holdAnalystsLock } from '../derived/analyst-views.js';
import { mergeSpan, replaceRejects } from '../merge/merge-span.js';
import type { FieldReject, SpanLoadRequest, SpanTransaction } from '../destination.js';
import type { ReleasableSpanLoad } from '../released-span-load.js';
import { quoteIdent } from '../warehouse/identifiers.js';
import {
  createStagingSql,
  DUPLICATE_COLUMNS,
  DUPLICATES_STAGING,
  FIELD_REJECTS_STAGING,
  REJECTS_STAGING,
  spanStagingTables,
  stagingName,
} from '../staging/staging.js';
import type { ColumnSpec, Row } from '../table-spec.js';
import { postgresDialect } from '../warehouse/warehouse-dialect.js';
import { copyTextRow, type CopyValue } from './copy-text-row.js';
import { SpanKeys } from '../staging/span-keys.js';
import { PostgresSqlConnection } from './postgres-connection.js';

/**
 * Rows wait as COPY text until a table has about this many characters of it (or the span commits), then go in
 * one COPY: a COPY per page of a few hundred rows would pay its round trip and start-up each time, and text
 * is several times smaller than the rows it comes from. Larger COPYs are faster still, but their text waits in
 * memory and raises the peak of a long backfill.
 */
const COPY_BATCH_CHARS = 1024 * 1024;

/** A staging table and the COPY text waiting for it. */
interface Staged {
  columns: ColumnSpec[];
  lines: string[];
  chars: number;
}

/**
 * A span staged in PostgreSQL temp tables of one dedicated session, filled by `COPY … FROM STDIN` (one COPY
 * per {@link COPY_BATCH_CHARS} of text: the fastest path measured), and merged in one transaction. Commits of the same stream
 * take turns across processes through a transaction-scoped advisory lock, so extraction stays parallel while
 * two workers never merge the same tables (or add the same pivot column) at once.
 */
export class PostgresSpanLoad implements ReleasableSpanLoad {
  private readonly conn: PostgresSqlConnection;
  private readonly staged = new Map<string, Staged>();
  private readonly keys: SpanKeys;

  private constructor(
    private readonly client: PoolClient,
    private readonly schema: string,
    private readonly request: SpanLoadRequest,
  ) {
    this.conn = new PostgresSqlConnection(client, schema);
    this.keys = new SpanKeys(request.tables);
  }

  /** Creates the staging tables on `client`, which the span owns until {@link release}. */
  static async open(client: PoolClient, schema: string, request: SpanLoadRequest): Promise<PostgresSpanLoad> {
    const load = new PostgresSpanLoad(client, schema, request);
    const { appended, all } = spanStagingTables(request.tables);
    for (const t of all) {
      await client.query(`DROP TABLE IF EXISTS pg_temp.${quoteIdent(t.name)}`);
      await client.query(createStagingSql(postgresDialect, t.name, t.columns));
    }
    for (const t of appended) load.staged.set(t.name, { columns: t.columns, lines: [], chars: 0 });
    return load;
  }

  async append(table: string, rows: ReadonlyArray<{ seq: number; windowStart: Day; row: Row }>): Promise<void> {
    const name = stagingName(table);
    const staged = this.staged.get(name);
    if (!staged)
      throw new Error(`no staging table for ${table} (a table staged with another's rows is never appended to)`);
    this.keys.add(table, rows);
    const dataColumns = staged.columns.slice(2).map((c) => c.name);
    for (const { seq, windowStart, row } of rows)
      this.add(staged, [seq, windowStart, ...dataColumns.map((c) => row[c])]);
    if (staged.chars >= COPY_BATCH_CHARS) await this.copy(name);
  }

  async reject(rows: ReadonlyArray<{ windowStart: Day; payload: string; error: string }>): Promise<void> {
    const staged = this.staged.get(REJECTS_STAGING)!;
    for (const r of rows) this.add(staged, [r.windowStart, r.payload, r.error]);
    if (staged.chars >= COPY_BATCH_CHARS) await this.copy(REJECTS_STAGING);
  }

  async rejectFields(rows: ReadonlyArray<FieldReject>): Promise<void> {
    const staged = this.staged.get(FIELD_REJECTS_STAGING)!;
    for (const r of rows) this.add(staged, [r.windowStart, r.recordKey, r.field, r.rawValue, r.error]);
    if (staged.chars >= COPY_BATCH_CHARS) await this.copy(FIELD_REJECTS_STAGING);
  }

  async reset(windowStart?: Day): Promise<void> {
    this.keys.forget();
    await this.copyAll();
    if (windowStart === undefined) await this.client.query(`TRUNCATE ${this.stagedNames().join(', ')}`);
    else
      for (const name of this.stagedNames())
        await this.client.query(`DELETE FROM ${name} WHERE "_window_start" = CAST($1 AS DATE)`, [windowStart]);
  }

  async commit<T>(windows: Window[], work: SpanTransaction<T>): Promise<T> {
    const r = this.request;
    await this.copyAll();
    await this.stageDuplicates();
    const span = { ...r, windows, loadedAt: new Date().toISOString(), keys: this.keys.states() };
    return this.conn.transaction(async () => {
      // Held until COMMIT or ROLLBACK; the key is the stream's target tables in this schema.
      await this.conn.run('SELECT pg_advisory_xact_lock(hashtext($1))', [`${this.schema}.${r.stream}`]);
      // then the analysts' views, which every commit may make again: taken before any DDL, so no two commits wait on each other's
      await holdAnalystsLock(this.conn, this.schema);
      // the merge sorts and hashes a span's staged rows: in the server's memory rather than in temp files
      await this.conn.run(`SET LOCAL work_mem = '64MB'`);
      return work(this.conn, () => mergeSpan(this.conn, postgresDialect, this.schema, span));
    });
  }

  async keepRejects(windows: Day[]): Promise<void> {
    await this.copyAll();
    const span = { ...this.request, windows, loadedAt: new Date().toISOString() };
    await this.conn.transaction(() => replaceRejects(this.conn, this.schema, span));
  }

  async abort(): Promise<void> {
    // Nothing to undo: staged rows never left the session; release drops them.
  }

  /** Drops the staging tables and returns the client to the pool (or discards it if it no longer answers). */
  async release(): Promise<void> {
    try {
      await this.client.query(
        `DROP TABLE IF EXISTS ${spanStagingTables(this.request.tables)
          .all.map((t) => `pg_temp.${quoteIdent(t.name)}`)
          .join(', ')}`,
      );
      this.client.release();
    } catch (error) {
      this.client.release(error instanceof Error ? error : true);
    }
  }

  private stagedNames(): string[] {
    return [...this.staged.keys()].map((n) => `pg_temp.${quoteIdent(n)}`);
  }

  /** Adds a row to the COPY text waiting for `staged` (a value PostgreSQL cannot hold is refused here). */
  private add(staged: Staged, values: readonly CopyValue[]): void {
    const line = copyTextRow(values);
    staged.lines.push(line);
    staged.chars += line.length;
  }

  /** One `COPY … FROM STDIN` (text format) of the text waiting for the staging table `name`. */
  private async copy(name: string): Promise<void> {
    const staged = this.staged.get(name)!;
    if (staged.lines.length === 0) return;
    const lines = staged.lines;
    staged.lines = [];
    staged.chars = 0;
    await this.copyLines(name, staged.columns, lines);
  }

  private async copyLines(name: string, columns: readonly ColumnSpec[], lines: string[]): Promise<void> {
    const sql = `COPY pg_temp.${quoteIdent(name)} (${columns.map((c) => quoteIdent(c.name)).join(', ')}) FROM STDIN`;
    await pipeline(Readable.from(chunks(lines)), this.client.query(copyFrom(sql)));
  }

  /** The rows whose key the span may have staged twice, for the merge to find the latest of each. */
  private async stageDuplicates(): Promise<void> {
    await this.client.query(`TRUNCATE pg_temp.${quoteIdent(DUPLICATES_STAGING)}`);
    const lines = Array.from(this.keys.listed(), (values) => copyTextRow(values));
    if (lines.length > 0) await this.copyLines(DUPLICATES_STAGING, DUPLICATE_COLUMNS, lines);
  }

  private async copyAll(): Promise<void> {
    for (const name of this.staged.keys()) await this.copy(name);
  }
}

/** Lines of COPY text joined into chunks of about 256 kB, the size the socket is handed at a time. */
function* chunks(lines: string[]): Generator<string> {
  for (let i = 0; i < lines.length;) {
    let chunk = '';
    while (i < lines.length && chunk.length < 256 * 1024) chunk += lines[i++];
    yield chunk;
  }
}
