-- The source requests a run tried again (429, 5xx, time-outs, dropped connections), beside the requests it made:
-- what the metrics' loyalty_etl_last_run_retries reads (docs/metrics.md). NULL for runs recorded before this file.

ALTER TABLE _etl_runs ADD COLUMN IF NOT EXISTS retries BIGINT;
