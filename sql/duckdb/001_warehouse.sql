-- The warehouse tables of loyalty-etl (DuckDB). Column meanings: docs/warehouse.md.
-- Pivot columns (cf_* on accounts, q_* on survey_responses) are added at load time; _etl_columns maps each
-- back to its source key.

CREATE TABLE IF NOT EXISTS accounts (
  customer_id VARCHAR PRIMARY KEY,
  phone VARCHAR,
  email VARCHAR,
  first_name VARCHAR,
  last_name VARCHAR,
  birthdate DATE,
  source VARCHAR,
  profile_set_at TIMESTAMPTZ,
  country VARCHAR,
  customer_since TIMESTAMPTZ,
  member_since TIMESTAMPTZ,
  nationality VARCHAR,
  gender VARCHAR,
  city VARCHAR,
  language VARCHAR,
  _window_start DATE NOT NULL,
  _run_id VARCHAR NOT NULL,
  _loaded_at TIMESTAMPTZ NOT NULL
);

CREATE TABLE IF NOT EXISTS account_custom_fields (
  customer_id VARCHAR NOT NULL,
  field_name VARCHAR NOT NULL,
  value VARCHAR,
  _window_start DATE NOT NULL,
  _run_id VARCHAR NOT NULL,
  _loaded_at TIMESTAMPTZ NOT NULL,
  PRIMARY KEY (customer_id, field_name)
);

CREATE TABLE IF NOT EXISTS _etl_runs (
  run_id VARCHAR PRIMARY KEY,
  job VARCHAR NOT NULL,
  command VARCHAR NOT NULL,
  started_at TIMESTAMPTZ NOT NULL,
  finished_at TIMESTAMPTZ,
  status VARCHAR NOT NULL,
  error VARCHAR,
  requests BIGINT
);

CREATE TABLE IF NOT EXISTS _etl_windows (
  job VARCHAR NOT NULL,
  stream VARCHAR NOT NULL,
  window_start DATE NOT NULL,
  window_end DATE NOT NULL,
  status VARCHAR NOT NULL,
  rows_extracted BIGINT NOT NULL,
  rows_loaded BIGINT NOT NULL,
  rows_rejected BIGINT NOT NULL,
  requests BIGINT NOT NULL,
  run_id VARCHAR NOT NULL,
  finished_at TIMESTAMPTZ NOT NULL,
  error VARCHAR,
  PRIMARY KEY (job, stream, window_start)
);

CREATE TABLE IF NOT EXISTS _etl_watermarks (
  job VARCHAR NOT NULL,
  stream VARCHAR NOT NULL,
  complete_through DATE NOT NULL,
  updated_at TIMESTAMPTZ NOT NULL,
  run_id VARCHAR NOT NULL,
  PRIMARY KEY (job, stream)
);

CREATE TABLE IF NOT EXISTS _etl_rejects (
  job VARCHAR NOT NULL,
  run_id VARCHAR NOT NULL,
  stream VARCHAR NOT NULL,
  window_start DATE NOT NULL,
  payload VARCHAR NOT NULL,
  error VARCHAR NOT NULL,
  rejected_at TIMESTAMPTZ NOT NULL
);

CREATE TABLE IF NOT EXISTS _etl_columns (
  table_name VARCHAR NOT NULL,
  column_name VARCHAR NOT NULL,
  source_key VARCHAR NOT NULL,
  added_at TIMESTAMPTZ NOT NULL,
  run_id VARCHAR NOT NULL,
  PRIMARY KEY (table_name, source_key),
  UNIQUE (table_name, column_name)
);
