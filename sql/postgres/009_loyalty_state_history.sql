-- History of the loyalty state and vouchers (docs/history.md; docs/warehouse.md, "History"). A customer's
-- answer is the whole of its state in a table: every time a state stream asks a customer, the instant is logged
-- (_etl_loyalty_status_asked, _etl_vouchers_asked), each row present then is an observation of its key, and the
-- versions of the customer's keys are rebuilt from all of the customer's observations: a version starts at the
-- first observation of a content and ends at the next observation with another content or without the key
-- (a wallet gone, a voucher no longer listed, a customer answered 1005), whatever order nights are loaded in
-- (src/load/history/scoped-history-statements.ts). valid_from/valid_to are instants (TIMESTAMPTZ): when the
-- customer was asked. A warehouse that held the state before this file starts each customer's history with its current rows,
-- observed when it was last asked (_etl_customer_observations); vouchers already gone have no version.

-- On Citus all of them are distributed by customer_id, co-located with the state tables (sql/postgres/README.md).

CREATE TABLE IF NOT EXISTS _etl_loyalty_status_asked (
  customer_id text NOT NULL,
  observed_at TIMESTAMPTZ NOT NULL,
  _run_id text NOT NULL,
  _loaded_at TIMESTAMPTZ NOT NULL,
  PRIMARY KEY (customer_id, observed_at)
);

CREATE TABLE IF NOT EXISTS _etl_vouchers_asked (
  customer_id text NOT NULL,
  observed_at TIMESTAMPTZ NOT NULL,
  _run_id text NOT NULL,
  _loaded_at TIMESTAMPTZ NOT NULL,
  PRIMARY KEY (customer_id, observed_at)
);

CREATE TABLE IF NOT EXISTS _etl_loyalty_status_observations (
  customer_id text NOT NULL,
  program_name text,
  program_logo text,
  tier_name text,
  tier_order integer,
  tier_logo text,
  tier_expires_at TIMESTAMPTZ,
  tier_benefits text,
  points_expiring numeric(18,4),
  points_expiring_on DATE,
  to_next_tier numeric(18,4),
  cumulative_credit numeric(18,4),
  observed_at TIMESTAMPTZ NOT NULL,
  _window_start DATE NOT NULL,
  content_hash text NOT NULL,
  _run_id text NOT NULL,
  _loaded_at TIMESTAMPTZ NOT NULL,
  PRIMARY KEY (customer_id, observed_at)
);

CREATE TABLE IF NOT EXISTS loyalty_status_history (
  customer_id text NOT NULL,
  program_name text,
  program_logo text,
  tier_name text,
  tier_order integer,
  tier_logo text,
  tier_expires_at TIMESTAMPTZ,
  tier_benefits text,
  points_expiring numeric(18,4),
  points_expiring_on DATE,
  to_next_tier numeric(18,4),
  cumulative_credit numeric(18,4),
  valid_from TIMESTAMPTZ NOT NULL,
  valid_to TIMESTAMPTZ,
  is_current BOOLEAN NOT NULL,
  content_hash text NOT NULL,
  _run_id text NOT NULL,
  _loaded_at TIMESTAMPTZ NOT NULL,
  PRIMARY KEY (customer_id, valid_from)
);

CREATE TABLE IF NOT EXISTS _etl_loyalty_wallets_observations (
  customer_id text NOT NULL,
  country_iso text NOT NULL,
  country_name text,
  currency text NOT NULL,
  points numeric(18,4),
  value numeric(18,4),
  redeemable_points numeric(18,4),
  redeemable_value numeric(18,4),
  observed_at TIMESTAMPTZ NOT NULL,
  _window_start DATE NOT NULL,
  content_hash text NOT NULL,
  _run_id text NOT NULL,
  _loaded_at TIMESTAMPTZ NOT NULL,
  PRIMARY KEY (customer_id, country_iso, currency, observed_at)
);

CREATE TABLE IF NOT EXISTS loyalty_wallets_history (
  customer_id text NOT NULL,
  country_iso text NOT NULL,
  country_name text,
  currency text NOT NULL,
  points numeric(18,4),
  value numeric(18,4),
  redeemable_points numeric(18,4),
  redeemable_value numeric(18,4),
  valid_from TIMESTAMPTZ NOT NULL,
  valid_to TIMESTAMPTZ,
  is_current BOOLEAN NOT NULL,
  content_hash text NOT NULL,
  _run_id text NOT NULL,
  _loaded_at TIMESTAMPTZ NOT NULL,
  PRIMARY KEY (customer_id, country_iso, currency, valid_from)
);

CREATE TABLE IF NOT EXISTS _etl_loyalty_balance_details_observations (
  customer_id text NOT NULL,
  expires_at TIMESTAMPTZ NOT NULL,
  points_gained numeric(18,4),
  points_redeemed numeric(18,4),
  points_expired numeric(18,4),
  observed_at TIMESTAMPTZ NOT NULL,
  _window_start DATE NOT NULL,
  content_hash text NOT NULL,
  _run_id text NOT NULL,
  _loaded_at TIMESTAMPTZ NOT NULL,
  PRIMARY KEY (customer_id, expires_at, observed_at)
);

CREATE TABLE IF NOT EXISTS loyalty_balance_details_history (
  customer_id text NOT NULL,
  expires_at TIMESTAMPTZ NOT NULL,
  points_gained numeric(18,4),
  points_redeemed numeric(18,4),
  points_expired numeric(18,4),
  valid_from TIMESTAMPTZ NOT NULL,
  valid_to TIMESTAMPTZ,
  is_current BOOLEAN NOT NULL,
  content_hash text NOT NULL,
  _run_id text NOT NULL,
  _loaded_at TIMESTAMPTZ NOT NULL,
  PRIMARY KEY (customer_id, expires_at, valid_from)
);

CREATE TABLE IF NOT EXISTS _etl_vouchers_observations (
  customer_id text NOT NULL,
  code text NOT NULL,
  title text,
  icon text,
  value numeric(18,4),
  value_type text,
  expires_on DATE,
  enabled BOOLEAN,
  status text,
  redeemed_at TIMESTAMPTZ,
  redeemed_branch text,
  observed_at TIMESTAMPTZ NOT NULL,
  _window_start DATE NOT NULL,
  content_hash text NOT NULL,
  _run_id text NOT NULL,
  _loaded_at TIMESTAMPTZ NOT NULL,
  PRIMARY KEY (customer_id, code, observed_at)
);

CREATE TABLE IF NOT EXISTS vouchers_history (
  customer_id text NOT NULL,
  code text NOT NULL,
  title text,
  icon text,
  value numeric(18,4),
  value_type text,
  expires_on DATE,
  enabled BOOLEAN,
  status text,
  redeemed_at TIMESTAMPTZ,
  redeemed_branch text,
  valid_from TIMESTAMPTZ NOT NULL,
  valid_to TIMESTAMPTZ,
  is_current BOOLEAN NOT NULL,
  content_hash text NOT NULL,
  _run_id text NOT NULL,
  _loaded_at TIMESTAMPTZ NOT NULL,
  PRIMARY KEY (customer_id, code, valid_from)
);

-- The content hash is the loader's (WarehouseDialect.contentHash): the next observation of the same state changes nothing.
INSERT INTO _etl_loyalty_status_asked (customer_id, observed_at, _run_id, _loaded_at)
SELECT c.customer_id, c.observed_at, c._run_id, c._loaded_at
  FROM _etl_customer_observations c
 WHERE c.stream = 'loyalty_status' AND c.outcome <> 'unaskable'
   AND NOT EXISTS (SELECT 1 FROM _etl_loyalty_status_asked a WHERE a.customer_id = c.customer_id);

INSERT INTO _etl_vouchers_asked (customer_id, observed_at, _run_id, _loaded_at)
SELECT c.customer_id, c.observed_at, c._run_id, c._loaded_at
  FROM _etl_customer_observations c
 WHERE c.stream = 'vouchers' AND c.outcome <> 'unaskable'
   AND NOT EXISTS (SELECT 1 FROM _etl_vouchers_asked a WHERE a.customer_id = c.customer_id);

INSERT INTO _etl_loyalty_status_observations (customer_id, program_name, program_logo, tier_name, tier_order, tier_logo, tier_expires_at, tier_benefits, points_expiring, points_expiring_on, to_next_tier, cumulative_credit, observed_at, _window_start, content_hash, _run_id, _loaded_at)
SELECT t.customer_id, t.program_name, t.program_logo, t.tier_name, t.tier_order, t.tier_logo, t.tier_expires_at, t.tier_benefits, t.points_expiring, t.points_expiring_on, t.to_next_tier, t.cumulative_credit, c.observed_at, t._window_start,
       md5(CAST(jsonb_build_array(CAST(t.customer_id AS text), CAST(t.program_name AS text), CAST(t.program_logo AS text), CAST(t.tier_name AS text), CAST(t.tier_order AS text), CAST(t.tier_logo AS text), CAST(t.tier_expires_at AS text), CAST(t.tier_benefits AS text), CAST(t.points_expiring AS text), CAST(t.points_expiring_on AS text), CAST(t.to_next_tier AS text), CAST(t.cumulative_credit AS text)) AS text)),
       c._run_id, c._loaded_at
  FROM loyalty_status t JOIN _etl_customer_observations c ON c.stream = 'loyalty_status' AND c.customer_id = t.customer_id AND c.outcome <> 'unaskable'
 WHERE NOT EXISTS (SELECT 1 FROM _etl_loyalty_status_observations o WHERE o.customer_id = t.customer_id);

INSERT INTO loyalty_status_history (customer_id, program_name, program_logo, tier_name, tier_order, tier_logo, tier_expires_at, tier_benefits, points_expiring, points_expiring_on, to_next_tier, cumulative_credit, valid_from, valid_to, is_current, content_hash, _run_id, _loaded_at)
SELECT customer_id, program_name, program_logo, tier_name, tier_order, tier_logo, tier_expires_at, tier_benefits, points_expiring, points_expiring_on, to_next_tier, cumulative_credit, observed_at, NULL, TRUE, content_hash, _run_id, _loaded_at
  FROM _etl_loyalty_status_observations o
 WHERE NOT EXISTS (SELECT 1 FROM loyalty_status_history h WHERE h.customer_id = o.customer_id);

INSERT INTO _etl_loyalty_wallets_observations (customer_id, country_iso, country_name, currency, points, value, redeemable_points, redeemable_value, observed_at, _window_start, content_hash, _run_id, _loaded_at)
SELECT t.customer_id, t.country_iso, t.country_name, t.currency, t.points, t.value, t.redeemable_points, t.redeemable_value, c.observed_at, t._window_start,
       md5(CAST(jsonb_build_array(CAST(t.customer_id AS text), CAST(t.country_iso AS text), CAST(t.country_name AS text), CAST(t.currency AS text), CAST(t.points AS text), CAST(t.value AS text), CAST(t.redeemable_points AS text), CAST(t.redeemable_value AS text)) AS text)),
       c._run_id, c._loaded_at
  FROM loyalty_wallets t JOIN _etl_customer_observations c ON c.stream = 'loyalty_status' AND c.customer_id = t.customer_id AND c.outcome <> 'unaskable'
 WHERE NOT EXISTS (SELECT 1 FROM _etl_loyalty_wallets_observations o WHERE o.customer_id = t.customer_id);

INSERT INTO loyalty_wallets_history (customer_id, country_iso, country_name, currency, points, value, redeemable_points, redeemable_value, valid_from, valid_to, is_current, content_hash, _run_id, _loaded_at)
SELECT customer_id, country_iso, country_name, currency, points, value, redeemable_points, redeemable_value, observed_at, NULL, TRUE, content_hash, _run_id, _loaded_at
  FROM _etl_loyalty_wallets_observations o
 WHERE NOT EXISTS (SELECT 1 FROM loyalty_wallets_history h WHERE h.customer_id = o.customer_id);

INSERT INTO _etl_loyalty_balance_details_observations (customer_id, expires_at, points_gained, points_redeemed, points_expired, observed_at, _window_start, content_hash, _run_id, _loaded_at)
SELECT t.customer_id, t.expires_at, t.points_gained, t.points_redeemed, t.points_expired, c.observed_at, t._window_start,
       md5(CAST(jsonb_build_array(CAST(t.customer_id AS text), CAST(t.expires_at AS text), CAST(t.points_gained AS text), CAST(t.points_redeemed AS text), CAST(t.points_expired AS text)) AS text)),
       c._run_id, c._loaded_at
  FROM loyalty_balance_details t JOIN _etl_customer_observations c ON c.stream = 'loyalty_status' AND c.customer_id = t.customer_id AND c.outcome <> 'unaskable'
 WHERE NOT EXISTS (SELECT 1 FROM _etl_loyalty_balance_details_observations o WHERE o.customer_id = t.customer_id);

INSERT INTO loyalty_balance_details_history (customer_id, expires_at, points_gained, points_redeemed, points_expired, valid_from, valid_to, is_current, content_hash, _run_id, _loaded_at)
SELECT customer_id, expires_at, points_gained, points_redeemed, points_expired, observed_at, NULL, TRUE, content_hash, _run_id, _loaded_at
  FROM _etl_loyalty_balance_details_observations o
 WHERE NOT EXISTS (SELECT 1 FROM loyalty_balance_details_history h WHERE h.customer_id = o.customer_id);

INSERT INTO _etl_vouchers_observations (customer_id, code, title, icon, value, value_type, expires_on, enabled, status, redeemed_at, redeemed_branch, observed_at, _window_start, content_hash, _run_id, _loaded_at)
SELECT t.customer_id, t.code, t.title, t.icon, t.value, t.value_type, t.expires_on, t.enabled, t.status, t.redeemed_at, t.redeemed_branch, c.observed_at, t._window_start,
       md5(CAST(jsonb_build_array(CAST(t.customer_id AS text), CAST(t.code AS text), CAST(t.title AS text), CAST(t.icon AS text), CAST(t.value AS text), CAST(t.value_type AS text), CAST(t.expires_on AS text), CAST(t.enabled AS text), CAST(t.status AS text), CAST(t.redeemed_at AS text), CAST(t.redeemed_branch AS text)) AS text)),
       c._run_id, c._loaded_at
  FROM vouchers t JOIN _etl_customer_observations c ON c.stream = 'vouchers' AND c.customer_id = t.customer_id AND c.outcome <> 'unaskable'
 WHERE NOT EXISTS (SELECT 1 FROM _etl_vouchers_observations o WHERE o.customer_id = t.customer_id) AND t.gone_at IS NULL;

INSERT INTO vouchers_history (customer_id, code, title, icon, value, value_type, expires_on, enabled, status, redeemed_at, redeemed_branch, valid_from, valid_to, is_current, content_hash, _run_id, _loaded_at)
SELECT customer_id, code, title, icon, value, value_type, expires_on, enabled, status, redeemed_at, redeemed_branch, observed_at, NULL, TRUE, content_hash, _run_id, _loaded_at
  FROM _etl_vouchers_observations o
 WHERE NOT EXISTS (SELECT 1 FROM vouchers_history h WHERE h.customer_id = o.customer_id);

-- The loyalty status of every customer as it was at an instant: each customer's version then. The tier mix at the
-- end of 1 March: SELECT tier_name, count(*) FROM loyalty_status_as_of('2024-03-01 23:59:59+00') GROUP BY tier_name.
-- It reads the tables of the schema it was created in, whatever the caller's search_path.
CREATE OR REPLACE FUNCTION loyalty_status_as_of(instant timestamptz) RETURNS SETOF loyalty_status_history
  LANGUAGE sql STABLE SET search_path FROM CURRENT
  AS $$ SELECT * FROM loyalty_status_history WHERE valid_from <= instant AND (valid_to IS NULL OR instant < valid_to) $$;
