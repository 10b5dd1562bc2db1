-- The observations of the per-customer state are kept as runs (docs/history.md, "How the observations are
-- kept"): a row of _etl_<table>_observations holds a key's content from the ask observed_at through the ask
-- last_observed_at, every ask of the customer between them (_etl_loyalty_status_asked, _etl_vouchers_asked)
-- having found the key with that same content. Rows written before this file each hold one ask; the next commit
-- that asks a customer rewrites all of that customer's observations as runs
-- (src/load/history/scoped-history-statements.ts).

ALTER TABLE _etl_loyalty_status_observations ADD COLUMN IF NOT EXISTS last_observed_at TIMESTAMPTZ;
ALTER TABLE _etl_loyalty_wallets_observations ADD COLUMN IF NOT EXISTS last_observed_at TIMESTAMPTZ;
ALTER TABLE _etl_loyalty_balance_details_observations ADD COLUMN IF NOT EXISTS last_observed_at TIMESTAMPTZ;
ALTER TABLE _etl_vouchers_observations ADD COLUMN IF NOT EXISTS last_observed_at TIMESTAMPTZ;

UPDATE _etl_loyalty_status_observations SET last_observed_at = observed_at WHERE last_observed_at IS NULL;
UPDATE _etl_loyalty_wallets_observations SET last_observed_at = observed_at WHERE last_observed_at IS NULL;
UPDATE _etl_loyalty_balance_details_observations SET last_observed_at = observed_at WHERE last_observed_at IS NULL;
UPDATE _etl_vouchers_observations SET last_observed_at = observed_at WHERE last_observed_at IS NULL;
