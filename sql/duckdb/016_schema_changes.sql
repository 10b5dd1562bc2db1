-- The schema contract of what analysts read (docs/warehouse.md, "The schema contract"): a published column keeps its
-- name and its type. _etl_schema_changes records every change of the tables and views analysts read that a commit
-- makes (a view or column added, a column typed from its first values, values that no longer fit a column's type, a
-- column added for a new type, anything retired), with its run, reason and how many values it concerns.
-- surveys.stable_view names each survey's view across the versions of its question set.

CREATE TABLE IF NOT EXISTS _etl_schema_changes (
  changed_at TIMESTAMPTZ NOT NULL,
  run_id VARCHAR NOT NULL,
  object_name VARCHAR NOT NULL,
  column_name VARCHAR,
  change VARCHAR NOT NULL,
  from_type VARCHAR,
  to_type VARCHAR,
  source_key VARCHAR,
  reason VARCHAR NOT NULL,
  value_count BIGINT
);

ALTER TABLE surveys ADD COLUMN IF NOT EXISTS stable_view VARCHAR;
