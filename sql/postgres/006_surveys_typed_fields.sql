-- What an analyst finds surveys and typed custom fields by (docs/warehouse.md).
-- survey_questions keeps each question's place in its survey: the first one labels the survey.
-- surveys is rebuilt from survey_questions and survey_responses at every commit of the surveys stream, and a
-- view per survey (surveys.view_name) holds that survey's q_ columns alone. accounts_typed reads the cf_ columns
-- of typed fields through _etl_typed_values (each distinct text of a field, read as its type once).

ALTER TABLE survey_questions ADD COLUMN IF NOT EXISTS question_order INTEGER;

CREATE TABLE IF NOT EXISTS surveys (
  survey_id text PRIMARY KEY,
  label text,
  question_count INTEGER NOT NULL,
  responses BIGINT NOT NULL,
  first_answer_at TIMESTAMPTZ,
  last_answer_at TIMESTAMPTZ,
  view_name text NOT NULL,
  _run_id text NOT NULL,
  _loaded_at TIMESTAMPTZ NOT NULL
);

CREATE TABLE IF NOT EXISTS _etl_views (
  view_name text PRIMARY KEY,
  definition text NOT NULL,
  updated_at TIMESTAMPTZ NOT NULL,
  run_id text NOT NULL
);

CREATE TABLE IF NOT EXISTS _etl_typed_columns (
  table_name text NOT NULL,
  column_name text NOT NULL,
  typed_column text NOT NULL,
  source_key text NOT NULL,
  kind text NOT NULL,
  format text,
  updated_at TIMESTAMPTZ NOT NULL,
  run_id text NOT NULL,
  PRIMARY KEY (table_name, column_name)
);

-- no declared key: a text may be longer than a B-tree entry holds; (column_name, raw_value) stays unique because
-- only texts not yet held are added
CREATE TABLE IF NOT EXISTS _etl_typed_values (
  column_name text NOT NULL,
  raw_value text NOT NULL,
  value text
);

CREATE OR REPLACE VIEW _etl_unparsed_values AS
SELECT t.table_name, t.column_name, t.typed_column, t.source_key, t.kind, t.format,
       COUNT(*) AS rows_unparsed, COUNT(DISTINCT f.value) AS distinct_values, MIN(f.value) AS example
  FROM _etl_typed_columns t
  JOIN account_custom_fields f ON f.field_name = t.source_key
  JOIN _etl_typed_values v ON v.column_name = t.column_name AND v.raw_value = f.value
 WHERE t.table_name = 'accounts' AND v.value IS NULL
 GROUP BY t.table_name, t.column_name, t.typed_column, t.source_key, t.kind, t.format;
CREATE INDEX IF NOT EXISTS _etl_typed_values_column ON _etl_typed_values (column_name);
