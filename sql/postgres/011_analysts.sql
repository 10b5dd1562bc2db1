-- What analysts read of personal data (destination.analysts.personal_data), for the schema of views they are granted
-- (load/derived/analyst-views.ts): one row, written by every run, backfill and demo. `key` is SHA-256 of the salt
-- (LOYALTY_PII_SALT), which the views of that schema hash phone, e-mail, names and birthdate with; this table is never
-- part of the analysts' schema. Whoever can read it can read the clear columns of this schema anyway.

CREATE TABLE IF NOT EXISTS _etl_analysts (
  analysts_schema text PRIMARY KEY,
  personal_data text NOT NULL,
  key text,
  updated_at TIMESTAMPTZ NOT NULL
);
