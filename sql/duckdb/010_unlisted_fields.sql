-- Members the service sends that the spec does not list (docs/warehouse.md, "Fields the spec does not list").
-- Each table of source records keeps them, per row, in _unlisted: a JSON object of the members by their path in
-- the record (`colour`, `tier.colour`, `answers[].mood`), NULL when the record had none. _etl_unlisted_fields
-- names each one once: the record type, the path, the table holding it, when it was first and last seen and in
-- how many rows (updated in the commit of every span that loaded it).

ALTER TABLE accounts ADD COLUMN IF NOT EXISTS _unlisted JSON;
ALTER TABLE survey_responses ADD COLUMN IF NOT EXISTS _unlisted JSON;
ALTER TABLE loyalty_postings ADD COLUMN IF NOT EXISTS _unlisted JSON;
ALTER TABLE loyalty_status ADD COLUMN IF NOT EXISTS _unlisted JSON;
ALTER TABLE loyalty_wallets ADD COLUMN IF NOT EXISTS _unlisted JSON;
ALTER TABLE loyalty_balance_details ADD COLUMN IF NOT EXISTS _unlisted JSON;
ALTER TABLE vouchers ADD COLUMN IF NOT EXISTS _unlisted JSON;

CREATE TABLE IF NOT EXISTS _etl_unlisted_fields (
  record_type VARCHAR NOT NULL,
  field_path VARCHAR NOT NULL,
  table_name VARCHAR NOT NULL,
  first_seen_run VARCHAR NOT NULL,
  first_seen_at TIMESTAMPTZ NOT NULL,
  last_seen_run VARCHAR NOT NULL,
  last_seen_at TIMESTAMPTZ NOT NULL,
  records BIGINT NOT NULL,
  PRIMARY KEY (record_type, field_path)
);
