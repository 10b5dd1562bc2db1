-- The requests each window's span tried again after a failure, beside its requests: retries per stream
-- (status, the metrics). Windows loaded before this file count none.
ALTER TABLE _etl_windows ADD COLUMN IF NOT EXISTS retries BIGINT DEFAULT 0;
