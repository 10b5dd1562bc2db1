-- Operating the warehouse from several processes: run leases, window claims, shared backfills, the run lock.
-- docs/operations.md describes how these columns and tables are used.

-- A run is alive while it is 'running' and its lease (expires_at, renewed by its process) lies ahead.
-- host and pid name the process, so a dead process on the same host is noticed without waiting.
ALTER TABLE _etl_runs ADD COLUMN host text;
ALTER TABLE _etl_runs ADD COLUMN pid INTEGER;
ALTER TABLE _etl_runs ADD COLUMN expires_at TIMESTAMPTZ;
ALTER TABLE _etl_runs ADD COLUMN backfill_id text;

-- A window row exists before its first load ('pending'); claimed_by is the run working it now, backfill_id the
-- backfill that last took it. A window is finished for backfill B when backfill_id = B and nobody holds it.
ALTER TABLE _etl_windows ALTER COLUMN finished_at DROP NOT NULL;
ALTER TABLE _etl_windows ADD COLUMN claimed_by text;
ALTER TABLE _etl_windows ADD COLUMN claimed_at TIMESTAMPTZ;
ALTER TABLE _etl_windows ADD COLUMN backfill_id text;

-- One row per backfill: a range of a job's streams. A call asking for the same scope joins the open one.
CREATE TABLE IF NOT EXISTS _etl_backfills (
  backfill_id text PRIMARY KEY,
  job text NOT NULL,
  scope text NOT NULL,
  generation INTEGER NOT NULL,
  streams text NOT NULL,
  range_from DATE NOT NULL,
  range_to DATE NOT NULL,
  status text NOT NULL,
  started_at TIMESTAMPTZ NOT NULL,
  finished_at TIMESTAMPTZ
);

-- Named locks held by a run (run:<job> for `run`); free when the holder is no longer alive.
CREATE TABLE IF NOT EXISTS _etl_locks (
  lock_name text PRIMARY KEY,
  run_id text,
  acquired_at TIMESTAMPTZ
);
