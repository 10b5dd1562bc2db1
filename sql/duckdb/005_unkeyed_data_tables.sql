-- The data tables without index-backed keys. Their keys (docs/warehouse.md, "Keys") hold because every load
-- merges on them — it deletes the rows the staged ones replace and inserts the staged ones, one transaction per
-- span — not because DuckDB checks them: an ART index of a key made every load maintain a second copy of it,
-- kept in memory, which grew with the table and cost more than the rows themselves (docs/performance.md).
-- The ledger tables (_etl_runs, _etl_windows, _etl_watermarks, …) keep theirs: they are small and their writes
-- rely on them; _etl_account_windows, a data table of the accounts stream, is unkeyed too.
-- Each table is copied as it is (pivot columns included), then its NOT NULL columns are marked again.

CREATE TABLE accounts__unkeyed AS SELECT * FROM accounts;
DROP TABLE accounts;
ALTER TABLE accounts__unkeyed RENAME TO accounts;
ALTER TABLE accounts ALTER COLUMN customer_id SET NOT NULL;
ALTER TABLE accounts ALTER COLUMN _window_start SET NOT NULL;
ALTER TABLE accounts ALTER COLUMN _run_id SET NOT NULL;
ALTER TABLE accounts ALTER COLUMN _loaded_at SET NOT NULL;

CREATE TABLE account_custom_fields__unkeyed AS SELECT * FROM account_custom_fields;
DROP TABLE account_custom_fields;
ALTER TABLE account_custom_fields__unkeyed RENAME TO account_custom_fields;
ALTER TABLE account_custom_fields ALTER COLUMN customer_id SET NOT NULL;
ALTER TABLE account_custom_fields ALTER COLUMN field_name SET NOT NULL;
ALTER TABLE account_custom_fields ALTER COLUMN _window_start SET NOT NULL;
ALTER TABLE account_custom_fields ALTER COLUMN _run_id SET NOT NULL;
ALTER TABLE account_custom_fields ALTER COLUMN _loaded_at SET NOT NULL;

CREATE TABLE survey_responses__unkeyed AS SELECT * FROM survey_responses;
DROP TABLE survey_responses;
ALTER TABLE survey_responses__unkeyed RENAME TO survey_responses;
ALTER TABLE survey_responses ALTER COLUMN response_id SET NOT NULL;
ALTER TABLE survey_responses ALTER COLUMN survey_id SET NOT NULL;
ALTER TABLE survey_responses ALTER COLUMN customer_id SET NOT NULL;
ALTER TABLE survey_responses ALTER COLUMN answered_at SET NOT NULL;
ALTER TABLE survey_responses ALTER COLUMN _window_start SET NOT NULL;
ALTER TABLE survey_responses ALTER COLUMN _run_id SET NOT NULL;
ALTER TABLE survey_responses ALTER COLUMN _loaded_at SET NOT NULL;

CREATE TABLE survey_answers__unkeyed AS SELECT * FROM survey_answers;
DROP TABLE survey_answers;
ALTER TABLE survey_answers__unkeyed RENAME TO survey_answers;
ALTER TABLE survey_answers ALTER COLUMN response_id SET NOT NULL;
ALTER TABLE survey_answers ALTER COLUMN question_code SET NOT NULL;
ALTER TABLE survey_answers ALTER COLUMN _window_start SET NOT NULL;
ALTER TABLE survey_answers ALTER COLUMN _run_id SET NOT NULL;
ALTER TABLE survey_answers ALTER COLUMN _loaded_at SET NOT NULL;

CREATE TABLE survey_questions__unkeyed AS SELECT * FROM survey_questions;
DROP TABLE survey_questions;
ALTER TABLE survey_questions__unkeyed RENAME TO survey_questions;
ALTER TABLE survey_questions ALTER COLUMN survey_id SET NOT NULL;
ALTER TABLE survey_questions ALTER COLUMN question_code SET NOT NULL;
ALTER TABLE survey_questions ALTER COLUMN question_text SET NOT NULL;
ALTER TABLE survey_questions ALTER COLUMN _window_start SET NOT NULL;
ALTER TABLE survey_questions ALTER COLUMN _run_id SET NOT NULL;
ALTER TABLE survey_questions ALTER COLUMN _loaded_at SET NOT NULL;

CREATE TABLE loyalty_postings__unkeyed AS SELECT * FROM loyalty_postings;
DROP TABLE loyalty_postings;
ALTER TABLE loyalty_postings__unkeyed RENAME TO loyalty_postings;
ALTER TABLE loyalty_postings ALTER COLUMN posting_id SET NOT NULL;
ALTER TABLE loyalty_postings ALTER COLUMN customer_id SET NOT NULL;
ALTER TABLE loyalty_postings ALTER COLUMN posted_at SET NOT NULL;
ALTER TABLE loyalty_postings ALTER COLUMN _window_start SET NOT NULL;
ALTER TABLE loyalty_postings ALTER COLUMN _run_id SET NOT NULL;
ALTER TABLE loyalty_postings ALTER COLUMN _loaded_at SET NOT NULL;

CREATE TABLE _etl_account_windows__unkeyed AS SELECT * FROM _etl_account_windows;
DROP TABLE _etl_account_windows;
ALTER TABLE _etl_account_windows__unkeyed RENAME TO _etl_account_windows;
ALTER TABLE _etl_account_windows ALTER COLUMN customer_id SET NOT NULL;
ALTER TABLE _etl_account_windows ALTER COLUMN _window_start SET NOT NULL;
ALTER TABLE _etl_account_windows ALTER COLUMN _run_id SET NOT NULL;
ALTER TABLE _etl_account_windows ALTER COLUMN _loaded_at SET NOT NULL;
