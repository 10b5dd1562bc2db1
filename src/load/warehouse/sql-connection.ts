import type { Kysely } from 'kysely';

/** The pipeline's own tables, typed for Kysely. Dates and timestamps travel as ISO text. */
export interface LedgerTables {
  _etl_runs: {
    run_id: string;
    job: string;
    command: string;
    started_at: string;
    finished_at: string | null;
    status: string;
    error: string | null;
    requests: number | null;
    retries: number | null;
    host: string | null;
    pid: number | null;
    expires_at: string | null;
    backfill_id: string | null;
  };
  _etl_integrations: {
    integration_id: number;
    title: string | null;
    shop_domain: string | null;
    client_title: string | null;
    created_at: string | null;
    last_seen_at: string;
  };
  _etl_windows: {
    job: string;
    stream: string;
    window_start: string;
    window_end: string;
    status: string;
    rows_extracted: number;
    rows_loaded: number;
    rows_rejected: number;
    requests: number;
    retries: number;
    run_id: string;
    finished_at: string | null;
    error: string | null;
    claimed_by: string | null;
    claimed_at: string | null;
    backfill_id: string | null;
  };
  _etl_watermarks: { job: string; stream: string; complete_through: string; updated_at: string; run_id: string };
  _etl_rejects: {
    job: string;
    run_id: string;
    stream: string;
    window_start: string;
    payload: string;
    error: string;
    rejected_at: string;
  };
  _etl_field_rejects: {
    job: string;
    run_id: string;
    stream: string;
    window_start: string;
    record_key: string;
    field: string;
    raw_value: string | null;
    error: string;
    rejected_at: string;
  };
  _etl_backfills: {
    backfill_id: string;
    job: string;
    scope: string;
    generation: number;
    streams: string;
    range_from: string;
    range_to: string;
    status: string;
    started_at: string;
    finished_at: string | null;
  };
  _etl_locks: { lock_name: string; run_id: string | null; acquired_at: string | null };
  _etl_columns: { table_name: string; column_name: string; source_key: string; added_at: string; run_id: string };
}

/**
 * One database connection, whatever the warehouse: raw SQL for generated statements (merges, DDL) and a
 * Kysely query builder bound to the same connection and schema for the ledger tables.
 */
export interface SqlConnection {
  /** Runs a statement; `params` bind to `$1`, `$2`, … */
  run(sql: string, params?: readonly unknown[]): Promise<void>;
  /** Runs a query and returns its rows with JSON-friendly values (dates and decimals as text). */
  all<T = Record<string, unknown>>(sql: string, params?: readonly unknown[]): Promise<T[]>;
  /** The warehouse schema, quoted, to qualify table names in raw SQL. */
  readonly schemaSql: string;
  /** Kysely on this connection, with the warehouse schema as default schema. */
  readonly db: Kysely<LedgerTables>;
  /** Runs `fn` in one transaction on this connection: commit when it resolves, roll back when it throws. */
  transaction<T>(fn: () => Promise<T>): Promise<T>;
}

/** An SQL statement with its `$n` parameters. */
export interface Statement {
  sql: string;
  params: unknown[];
}
