-- Loyalty state and vouchers (docs/warehouse.md): what the service reports about each
-- customer today, and when each customer was last asked by each state stream. Like every data table here since
-- 005, no index-backed key: the merge keeps the keys (docs/warehouse.md).

CREATE TABLE IF NOT EXISTS loyalty_status (
  customer_id VARCHAR NOT NULL,
  program_name VARCHAR,
  program_logo VARCHAR,
  tier_name VARCHAR,
  tier_order INTEGER,
  tier_logo VARCHAR,
  tier_expires_at TIMESTAMPTZ,
  tier_benefits VARCHAR,
  points_expiring DECIMAL(18,4),
  points_expiring_on DATE,
  to_next_tier DECIMAL(18,4),
  cumulative_credit DECIMAL(18,4),
  observed_at TIMESTAMPTZ NOT NULL,
  _window_start DATE NOT NULL,
  _run_id VARCHAR NOT NULL,
  _loaded_at TIMESTAMPTZ NOT NULL
);

CREATE TABLE IF NOT EXISTS loyalty_wallets (
  customer_id VARCHAR NOT NULL,
  country_iso VARCHAR NOT NULL,
  country_name VARCHAR,
  currency VARCHAR NOT NULL,
  points DECIMAL(18,4),
  value DECIMAL(18,4),
  redeemable_points DECIMAL(18,4),
  redeemable_value DECIMAL(18,4),
  _window_start DATE NOT NULL,
  _run_id VARCHAR NOT NULL,
  _loaded_at TIMESTAMPTZ NOT NULL
);

CREATE TABLE IF NOT EXISTS loyalty_balance_details (
  customer_id VARCHAR NOT NULL,
  expires_at TIMESTAMPTZ NOT NULL,
  points_gained DECIMAL(18,4),
  points_redeemed DECIMAL(18,4),
  points_expired DECIMAL(18,4),
  _window_start DATE NOT NULL,
  _run_id VARCHAR NOT NULL,
  _loaded_at TIMESTAMPTZ NOT NULL
);

CREATE TABLE IF NOT EXISTS vouchers (
  customer_id VARCHAR NOT NULL,
  code VARCHAR NOT NULL,
  title VARCHAR,
  icon VARCHAR,
  value DECIMAL(18,4),
  value_type VARCHAR,
  expires_on DATE,
  enabled BOOLEAN,
  status VARCHAR,
  redeemed_at TIMESTAMPTZ,
  redeemed_branch VARCHAR,
  first_seen_at TIMESTAMPTZ NOT NULL,
  last_seen_at TIMESTAMPTZ NOT NULL,
  gone_at TIMESTAMPTZ,
  _window_start DATE NOT NULL,
  _run_id VARCHAR NOT NULL,
  _loaded_at TIMESTAMPTZ NOT NULL
);

CREATE TABLE IF NOT EXISTS _etl_customer_observations (
  stream VARCHAR NOT NULL,
  customer_id VARCHAR NOT NULL,
  observed_at TIMESTAMPTZ NOT NULL,
  outcome VARCHAR NOT NULL,
  _run_id VARCHAR NOT NULL,
  _loaded_at TIMESTAMPTZ NOT NULL
);
