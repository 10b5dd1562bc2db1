-- History never backdates (docs/warehouse.md, "History"): each observation of an account keeps the day, in the job's
-- zone, that its profileSet names, and no version of accounts_history starts before that day. Observations loaded
-- before this file have none: they count from their window, as they did.
ALTER TABLE _etl_accounts_observations ADD COLUMN IF NOT EXISTS _set_on DATE;
