-- History of accounts (docs/history.md; docs/warehouse.md, "History"). Every commit of the accounts stream
-- records what each window served in _etl_accounts_observations (one row per customer and window, with a hash of
-- its content) and rebuilds the versions of the customers it touched in accounts_history from all of their
-- observations, so the versions never depend on the order windows are loaded in
-- (src/load/history/history-statements.ts).
-- A warehouse that held accounts before this file starts its history with each customer's current row, observed
-- in the window that served it (accounts._window_start): the versions before it were overwritten and are lost,
-- unless a backfill re-reads the windows that served them, whose observations then take their place in time.
-- Like the other data tables here (005_unkeyed_data_tables.sql), they declare no key: the loader keeps it.

CREATE TABLE IF NOT EXISTS _etl_accounts_observations (
  customer_id VARCHAR NOT NULL,
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
  custom_fields JSON NOT NULL,
  _window_start DATE NOT NULL,
  content_hash VARCHAR NOT NULL,
  _run_id VARCHAR NOT NULL,
  _loaded_at TIMESTAMPTZ NOT NULL
);

CREATE TABLE IF NOT EXISTS accounts_history (
  customer_id VARCHAR NOT NULL,
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
  custom_fields JSON NOT NULL,
  valid_from DATE NOT NULL,
  valid_to DATE,
  is_current BOOLEAN NOT NULL,
  content_hash VARCHAR NOT NULL,
  _run_id VARCHAR NOT NULL,
  _loaded_at TIMESTAMPTZ NOT NULL
);

-- The content hash is the loader's (WarehouseDialect.contentHash): the next load of the same window changes nothing.
INSERT INTO _etl_accounts_observations (customer_id, phone, email, first_name, last_name, birthdate, source, profile_set_at, country, customer_since, member_since, nationality, gender, city, language, custom_fields, _window_start, content_hash, _run_id, _loaded_at)
SELECT a.customer_id, a.phone, a.email, a.first_name, a.last_name, a.birthdate, a.source, a.profile_set_at, a.country, a.customer_since, a.member_since, a.nationality, a.gender, a.city, a.language, COALESCE(f.fields, CAST('{}' AS JSON)), a._window_start,
       md5(CAST(json_array(CAST(a.customer_id AS VARCHAR), CAST(a.phone AS VARCHAR), CAST(a.email AS VARCHAR), CAST(a.first_name AS VARCHAR), CAST(a.last_name AS VARCHAR), CAST(a.birthdate AS VARCHAR), CAST(a.source AS VARCHAR), CAST(a.profile_set_at AS VARCHAR), CAST(a.country AS VARCHAR), CAST(a.customer_since AS VARCHAR), CAST(a.member_since AS VARCHAR), CAST(a.nationality AS VARCHAR), CAST(a.gender AS VARCHAR), CAST(a.city AS VARCHAR), CAST(a.language AS VARCHAR), to_json(list_sort(map_entries(CAST(CAST(COALESCE(f.fields, '{}') AS JSON) AS MAP(VARCHAR, VARCHAR)))))) AS VARCHAR)),
       a._run_id, a._loaded_at
  FROM accounts a
  LEFT JOIN (SELECT customer_id, json_group_object(field_name, value) AS fields FROM account_custom_fields GROUP BY customer_id) f ON f.customer_id = a.customer_id
 WHERE NOT EXISTS (SELECT 1 FROM _etl_accounts_observations o WHERE o.customer_id = a.customer_id);

INSERT INTO accounts_history (customer_id, phone, email, first_name, last_name, birthdate, source, profile_set_at, country, customer_since, member_since, nationality, gender, city, language, custom_fields, valid_from, valid_to, is_current, content_hash, _run_id, _loaded_at)
SELECT customer_id, phone, email, first_name, last_name, birthdate, source, profile_set_at, country, customer_since, member_since, nationality, gender, city, language, custom_fields, _window_start, NULL, TRUE, content_hash, _run_id, _loaded_at
  FROM _etl_accounts_observations o
 WHERE NOT EXISTS (SELECT 1 FROM accounts_history h WHERE h.customer_id = o.customer_id);

-- The customers as they were on a day (a DATE, or text such as '2024-03-01'): each one's version that day, as of
-- the end of the day in source.timezone. SELECT * FROM accounts_as_of('2024-03-01')
CREATE OR REPLACE MACRO accounts_as_of(day) AS TABLE
  SELECT * FROM accounts_history WHERE valid_from <= CAST(day AS DATE) AND (valid_to IS NULL OR CAST(day AS DATE) < valid_to);
