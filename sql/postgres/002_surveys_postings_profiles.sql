-- Survey answers, loyalty postings, reference data, and the account change signal (PostgreSQL).
-- survey_id and response_id are derived from content (docs/warehouse.md, "Keys without ids"); q_* pivot columns
-- are added to survey_responses at load time and mapped in _etl_columns.

CREATE TABLE IF NOT EXISTS survey_responses (
  response_id text PRIMARY KEY,
  survey_id text NOT NULL,
  customer_id text NOT NULL,
  answered_at timestamptz NOT NULL,
  brand text,
  branch text,
  staff text,
  operator text,
  receipt text,
  tier_name text,
  first_name text,
  last_name text,
  phone text,
  email text,
  _window_start date NOT NULL,
  _run_id text NOT NULL,
  _loaded_at timestamptz NOT NULL
);

CREATE TABLE IF NOT EXISTS survey_answers (
  response_id text NOT NULL,
  question_code text NOT NULL,
  answer text,
  _window_start date NOT NULL,
  _run_id text NOT NULL,
  _loaded_at timestamptz NOT NULL,
  PRIMARY KEY (response_id, question_code)
);

CREATE TABLE IF NOT EXISTS survey_questions (
  survey_id text NOT NULL,
  question_code text NOT NULL,
  question_text text NOT NULL,
  _window_start date NOT NULL,
  _run_id text NOT NULL,
  _loaded_at timestamptz NOT NULL,
  PRIMARY KEY (survey_id, question_code)
);

CREATE TABLE IF NOT EXISTS loyalty_postings (
  posting_id text PRIMARY KEY,
  customer_id text NOT NULL,
  posted_at timestamptz NOT NULL,
  txn_at timestamptz,
  credit numeric(18,4),
  credit_value numeric(18,4),
  debit numeric(18,4),
  debit_value numeric(18,4),
  award_on numeric(18,4),
  currency text,
  receipt text,
  branch_name text,
  brand_name text,
  country_iso text,
  country text,
  tier_order integer,
  tier_name text,
  type integer,
  posting_type integer,
  _window_start date NOT NULL,
  _run_id text NOT NULL,
  _loaded_at timestamptz NOT NULL
);

CREATE TABLE IF NOT EXISTS profiles (
  profile_id integer PRIMARY KEY,
  label text,
  main boolean,
  used boolean,
  main_profile_id integer,
  created_by integer,
  _run_id text NOT NULL,
  _loaded_at timestamptz NOT NULL
);

CREATE TABLE IF NOT EXISTS profile_fields (
  profile_id integer NOT NULL,
  field_id integer NOT NULL,
  name text NOT NULL,
  label text,
  type_id integer,
  render_type integer,
  order_value integer,
  required boolean,
  multiple boolean,
  is_business boolean,
  column_number text,
  format text,
  default_value text,
  options jsonb,
  definition jsonb NOT NULL,
  _run_id text NOT NULL,
  _loaded_at timestamptz NOT NULL,
  PRIMARY KEY (profile_id, field_id)
);

CREATE TABLE IF NOT EXISTS _etl_account_windows (
  customer_id text NOT NULL,
  _window_start date NOT NULL,
  _run_id text NOT NULL,
  _loaded_at timestamptz NOT NULL,
  PRIMARY KEY (customer_id, _window_start)
);
