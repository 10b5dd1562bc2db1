-- History of accounts (docs/history.md; docs/warehouse.md, "History"). Every commit of the accounts stream
-- records what each window served in _etl_accounts_observations (one row per customer and window, with a hash of
-- its content) and rebuilds the versions of the customers it touched in accounts_history from all of their
-- observations, so the versions never depend on the order windows are loaded in
-- (src/load/history/history-statements.ts).
-- A warehouse that held accounts before this file starts its history with each customer's current row, observed
-- in the window that served it (accounts._window_start): the versions before it were overwritten and are lost,
-- unless a backfill re-reads the windows that served them, whose observations then take their place in time.
-- On Citus both are distributed by customer_id, co-located with accounts (sql/postgres/README.md).

CREATE TABLE IF NOT EXISTS _etl_accounts_observations (
  customer_id text NOT NULL,
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
  custom_fields jsonb NOT NULL,
  _window_start DATE NOT NULL,
  content_hash text NOT NULL,
  _run_id text NOT NULL,
  _loaded_at TIMESTAMPTZ NOT NULL,
  PRIMARY KEY (customer_id, _window_start)
);

-- Every commit reads and replaces the observations of its windows: by day, not by customer.
CREATE INDEX IF NOT EXISTS _etl_accounts_observations_window ON _etl_accounts_observations (_window_start);

CREATE TABLE IF NOT EXISTS accounts_history (
  customer_id text NOT NULL,
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
  custom_fields jsonb NOT NULL,
  valid_from DATE NOT NULL,
  valid_to DATE,
  is_current BOOLEAN NOT NULL,
  content_hash text NOT NULL,
  _run_id text NOT NULL,
  _loaded_at TIMESTAMPTZ NOT NULL,
  PRIMARY KEY (customer_id, valid_from)
);

-- The content hash is the loader's (WarehouseDialect.contentHash): the next load of the same window changes nothing.
INSERT INTO _etl_accounts_observations (customer_id, phone, email, first_name, last_name, birthdate, source, profile_set_at, country, customer_since, member_since, nationality, gender, city, language, custom_fields, _window_start, content_hash, _run_id, _loaded_at)
SELECT a.customer_id, a.phone, a.email, a.first_name, a.last_name, a.birthdate, a.source, a.profile_set_at, a.country, a.customer_since, a.member_since, a.nationality, a.gender, a.city, a.language, COALESCE(f.fields, CAST('{}' AS jsonb)), a._window_start,
       md5(CAST(jsonb_build_array(CAST(a.customer_id AS text), CAST(a.phone AS text), CAST(a.email AS text), CAST(a.first_name AS text), CAST(a.last_name AS text), CAST(a.birthdate AS text), CAST(a.source AS text), CAST(a.profile_set_at AS text), CAST(a.country AS text), CAST(a.customer_since AS text), CAST(a.member_since AS text), CAST(a.nationality AS text), CAST(a.gender AS text), CAST(a.city AS text), CAST(a.language AS text), COALESCE(f.fields, CAST('{}' AS jsonb))) AS text)),
       a._run_id, a._loaded_at
  FROM accounts a
  LEFT JOIN (SELECT customer_id, jsonb_object_agg(field_name, value) AS fields FROM account_custom_fields GROUP BY customer_id) f ON f.customer_id = a.customer_id
 WHERE NOT EXISTS (SELECT 1 FROM _etl_accounts_observations o WHERE o.customer_id = a.customer_id);

INSERT INTO accounts_history (customer_id, phone, email, first_name, last_name, birthdate, source, profile_set_at, country, customer_since, member_since, nationality, gender, city, language, custom_fields, valid_from, valid_to, is_current, content_hash, _run_id, _loaded_at)
SELECT customer_id, phone, email, first_name, last_name, birthdate, source, profile_set_at, country, customer_since, member_since, nationality, gender, city, language, custom_fields, _window_start, NULL, TRUE, content_hash, _run_id, _loaded_at
  FROM _etl_accounts_observations o
 WHERE NOT EXISTS (SELECT 1 FROM accounts_history h WHERE h.customer_id = o.customer_id);

-- The customers as they were on a day: each one's version that day, as of the end of the day in source.timezone.
-- SELECT * FROM accounts_as_of('2024-03-01'). It reads the tables of the schema it was created in, whatever the
-- caller's search_path.
CREATE OR REPLACE FUNCTION accounts_as_of(day date) RETURNS SETOF accounts_history
  LANGUAGE sql STABLE SET search_path FROM CURRENT
  AS $$ SELECT * FROM accounts_history WHERE valid_from <= day AND (valid_to IS NULL OR day < valid_to) $$;
