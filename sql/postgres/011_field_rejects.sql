-- Fields that could not be read (docs/warehouse.md, "Rejects"): a non-key field of a record whose value the pipeline
-- cannot read loads as NULL, and its raw value and the problem are kept here, one row per field, so one bad field
-- never costs its record. A window loaded again replaces its rows, like _etl_rejects.
CREATE TABLE IF NOT EXISTS _etl_field_rejects (
  job text NOT NULL,
  run_id text NOT NULL,
  stream text NOT NULL,
  window_start DATE NOT NULL,
  record_key text NOT NULL,
  field text NOT NULL,
  raw_value text,
  error text NOT NULL,
  rejected_at TIMESTAMPTZ NOT NULL
);
