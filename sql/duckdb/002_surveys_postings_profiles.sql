-- Survey answers, loyalty postings, reference data, and the account change signal.
-- survey_id and response_id are derived from content (docs/warehouse.md, "Keys without ids"); q_* pivot columns
-- are added to survey_responses at load time and mapped in _etl_columns.

CREATE TABLE IF NOT EXISTS survey_responses (
  response_id VARCHAR PRIMARY KEY,
  survey_id VARCHAR NOT NULL,
  customer_id VARCHAR NOT NULL,
  answered_at TIMESTAMPTZ NOT NULL,
  brand VARCHAR,
  branch VARCHAR,
  staff VARCHAR,
  operator VARCHAR,
  receipt VARCHAR,
  tier_name VARCHAR,
  first_name VARCHAR,
  last_name VARCHAR,
  phone VARCHAR,
  email VARCHAR,
  _window_start DATE NOT NULL,
  _run_id VARCHAR NOT NULL,
  _loaded_at TIMESTAMPTZ NOT NULL
);

CREATE TABLE IF NOT EXISTS survey_answers (
  response_id VARCHAR NOT NULL,
  question_code VARCHAR NOT NULL,
  answer VARCHAR,
  _window_start DATE NOT NULL,
  _run_id VARCHAR NOT NULL,
  _loaded_at TIMESTAMPTZ NOT NULL,
  PRIMARY KEY (response_id, question_code)
);

CREATE TABLE IF NOT EXISTS survey_questions (
  survey_id VARCHAR NOT NULL,
  question_code VARCHAR NOT NULL,
  question_text VARCHAR NOT NULL,
  _window_start DATE NOT NULL,
  _run_id VARCHAR NOT NULL,
  _loaded_at TIMESTAMPTZ NOT NULL,
  PRIMARY KEY (survey_id, question_code)
);

CREATE TABLE IF NOT EXISTS loyalty_postings (
  posting_id VARCHAR PRIMARY KEY,
  customer_id VARCHAR NOT NULL,
  posted_at TIMESTAMPTZ NOT NULL,
  txn_at TIMESTAMPTZ,
  credit DECIMAL(18,4),
  credit_value DECIMAL(18,4),
  debit DECIMAL(18,4),
  debit_value DECIMAL(18,4),
  award_on DECIMAL(18,4),
  currency VARCHAR,
  receipt VARCHAR,
  branch_name VARCHAR,
  brand_name VARCHAR,
  country_iso VARCHAR,
  country VARCHAR,
  tier_order INTEGER,
  tier_name VARCHAR,
  type INTEGER,
  posting_type INTEGER,
  _window_start DATE NOT NULL,
  _run_id VARCHAR NOT NULL,
  _loaded_at TIMESTAMPTZ NOT NULL
);

CREATE TABLE IF NOT EXISTS profiles (
  profile_id INTEGER PRIMARY KEY,
  label VARCHAR,
  main BOOLEAN,
  used BOOLEAN,
  main_profile_id INTEGER,
  created_by INTEGER,
  _run_id VARCHAR NOT NULL,
  _loaded_at TIMESTAMPTZ NOT NULL
);

CREATE TABLE IF NOT EXISTS profile_fields (
  profile_id INTEGER NOT NULL,
  field_id INTEGER NOT NULL,
  name VARCHAR NOT NULL,
  label VARCHAR,
  type_id INTEGER,
  render_type INTEGER,
  order_value INTEGER,
  required BOOLEAN,
  multiple BOOLEAN,
  is_business BOOLEAN,
  column_number VARCHAR,
  format VARCHAR,
  default_value VARCHAR,
  options JSON,
  definition JSON NOT NULL,
  _run_id VARCHAR NOT NULL,
  _loaded_at TIMESTAMPTZ NOT NULL,
  PRIMARY KEY (profile_id, field_id)
);

CREATE TABLE IF NOT EXISTS _etl_account_windows (
  customer_id VARCHAR NOT NULL,
  _window_start DATE NOT NULL,
  _run_id VARCHAR NOT NULL,
  _loaded_at TIMESTAMPTZ NOT NULL,
  PRIMARY KEY (customer_id, _window_start)
);
