-- The evidence the typed views decide a column's type by (docs/warehouse.md, "Surveys and their views", "Custom
-- fields"): per survey and question, and per custom field, how many values there are and how many fit each type.
-- Kept by every commit from the rows it changed (load/type-evidence.ts), so a commit no longer reads survey_answers
-- and account_custom_fields whole. _etl_type_rules names the rule each table's evidence was counted by; a table
-- without a row there (a warehouse made before this file) has its evidence counted whole once, at its next commit.

CREATE TABLE IF NOT EXISTS _etl_type_evidence (
  table_name VARCHAR NOT NULL,
  survey_id VARCHAR NOT NULL,
  name VARCHAR NOT NULL,
  value_count BIGINT NOT NULL,
  fit_integer BIGINT NOT NULL,
  fit_decimal BIGINT NOT NULL,
  fit_boolean BIGINT NOT NULL,
  fit_date BIGINT NOT NULL,
  PRIMARY KEY (table_name, survey_id, name)
);

CREATE TABLE IF NOT EXISTS _etl_type_rules (
  table_name VARCHAR PRIMARY KEY,
  rule VARCHAR NOT NULL,
  updated_at TIMESTAMPTZ NOT NULL,
  run_id VARCHAR NOT NULL
);
