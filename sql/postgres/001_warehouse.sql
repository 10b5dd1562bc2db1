-- The warehouse tables of loyalty-etl (PostgreSQL). Column meanings: docs/warehouse.md.
-- The same tables, columns and keys as sql/duckdb/001_warehouse.sql, in plain PostgreSQL only (no
-- extensions, foreign keys, triggers or exclusion constraints), so the file also runs on Citus; the
-- distribution column each table would take there is in sql/postgres/README.md.
-- Pivot columns (cf_* on accounts, q_* on survey_responses) are added at load time; _etl_columns maps each
-- back to its source key.

CREATE TABLE IF NOT EXISTS accounts (
  customer_id text PRIMARY KEY,
  phone text,
  email text,
  first_name text,
  last_name text,
  birthdate DATE,
  source text,
  profile_set_at TIMESTAMPTZ,
  country text,
  customer_since TIMESTAMPTZ,
  member_since TIMESTAMPTZ,
  nationality text,
  gender text,
  city text,
  language text,
  _window_start DATE NOT NULL,
  _run_id text NOT NULL,
  _loaded_at TIMESTAMPTZ NOT NULL
);

CREATE TABLE IF NOT EXISTS account_custom_fields (
  customer_id text NOT NULL,
  field_name text NOT NULL,
  value text,
  _window_start DATE NOT NULL,
  _run_id text NOT NULL,
  _loaded_at TIMESTAMPTZ NOT NULL,
  PRIMARY KEY (customer_id, field_name)
);

CREATE TABLE IF NOT EXISTS _etl_runs (
  run_id text PRIMARY KEY,
  job text NOT NULL,
  command text NOT NULL,
  started_at TIMESTAMPTZ NOT NULL,
  finished_at TIMESTAMPTZ,
  status text NOT NULL,
  error text,
  requests BIGINT
);

CREATE TABLE IF NOT EXISTS _etl_windows (
  job text NOT NULL,
  stream text NOT NULL,
  window_start DATE NOT NULL,
  window_end DATE NOT NULL,
  status text NOT NULL,
  rows_extracted BIGINT NOT NULL,
  rows_loaded BIGINT NOT NULL,
  rows_rejected BIGINT NOT NULL,
  requests BIGINT NOT NULL,
  run_id text NOT NULL,
  finished_at TIMESTAMPTZ NOT NULL,
  error text,
  PRIMARY KEY (job, stream, window_start)
);

CREATE TABLE IF NOT EXISTS _etl_watermarks (
  job text NOT NULL,
  stream text NOT NULL,
  complete_through DATE NOT NULL,
  updated_at TIMESTAMPTZ NOT NULL,
  run_id text NOT NULL,
  PRIMARY KEY (job, stream)
);

CREATE TABLE IF NOT EXISTS _etl_rejects (
  job text NOT NULL,
  run_id text NOT NULL,
  stream text NOT NULL,
  window_start DATE NOT NULL,
  payload text NOT NULL,
  error text NOT NULL,
  rejected_at TIMESTAMPTZ NOT NULL
);

CREATE TABLE IF NOT EXISTS _etl_columns (
  table_name text NOT NULL,
  column_name text NOT NULL,
  source_key text NOT NULL,
  added_at TIMESTAMPTZ NOT NULL,
  run_id text NOT NULL,
  PRIMARY KEY (table_name, source_key),
  UNIQUE (table_name, column_name)
);
