-- Loyalty state and vouchers (docs/warehouse.md), PostgreSQL: what the service reports
-- about each customer today, and when each customer was last asked by each state stream.

CREATE TABLE IF NOT EXISTS loyalty_status (
  customer_id text NOT NULL,
  program_name text,
  program_logo text,
  tier_name text,
  tier_order integer,
  tier_logo text,
  tier_expires_at timestamptz,
  tier_benefits text,
  points_expiring numeric(18,4),
  points_expiring_on date,
  to_next_tier numeric(18,4),
  cumulative_credit numeric(18,4),
  observed_at timestamptz NOT NULL,
  _window_start date NOT NULL,
  _run_id text NOT NULL,
  _loaded_at timestamptz NOT NULL,
  PRIMARY KEY (customer_id)
);

CREATE TABLE IF NOT EXISTS loyalty_wallets (
  customer_id text NOT NULL,
  country_iso text NOT NULL,
  country_name text,
  currency text NOT NULL,
  points numeric(18,4),
  value numeric(18,4),
  redeemable_points numeric(18,4),
  redeemable_value numeric(18,4),
  _window_start date NOT NULL,
  _run_id text NOT NULL,
  _loaded_at timestamptz NOT NULL,
  PRIMARY KEY (customer_id, country_iso, currency)
);

CREATE TABLE IF NOT EXISTS loyalty_balance_details (
  customer_id text NOT NULL,
  expires_at timestamptz NOT NULL,
  points_gained numeric(18,4),
  points_redeemed numeric(18,4),
  points_expired numeric(18,4),
  _window_start date NOT NULL,
  _run_id text NOT NULL,
  _loaded_at timestamptz NOT NULL,
  PRIMARY KEY (customer_id, expires_at)
);

CREATE TABLE IF NOT EXISTS vouchers (
  customer_id text NOT NULL,
  code text NOT NULL,
  title text,
  icon text,
  value numeric(18,4),
  value_type text,
  expires_on date,
  enabled boolean,
  status text,
  redeemed_at timestamptz,
  redeemed_branch text,
  first_seen_at timestamptz NOT NULL,
  last_seen_at timestamptz NOT NULL,
  gone_at timestamptz,
  _window_start date NOT NULL,
  _run_id text NOT NULL,
  _loaded_at timestamptz NOT NULL,
  PRIMARY KEY (customer_id, code)
);

CREATE TABLE IF NOT EXISTS _etl_customer_observations (
  stream text NOT NULL,
  customer_id text NOT NULL,
  observed_at timestamptz NOT NULL,
  outcome text NOT NULL,
  _run_id text NOT NULL,
  _loaded_at timestamptz NOT NULL,
  PRIMARY KEY (stream, customer_id)
);
