-- Loyalty webhook events stored by `loyalty-etl webhook`, and how far each job's postings stream has read them.
-- event_key is derived from the body (docs/webhook.md, "Events and their keys"); seq numbers events in the order they
-- were committed; the postings selection `webhook` asks for the customers of events after its bookmark.

CREATE TABLE IF NOT EXISTS loyalty_events (
  event_key VARCHAR PRIMARY KEY,
  seq BIGINT NOT NULL UNIQUE,
  received_at TIMESTAMPTZ NOT NULL,
  event_trigger VARCHAR NOT NULL,
  origin_source VARCHAR,
  country_iso VARCHAR,
  customer_id VARCHAR NOT NULL,
  phone VARCHAR,
  tier_name VARCHAR,
  tier_order INTEGER,
  points DECIMAL(18,4),
  cumulative_credit DECIMAL(18,4),
  point_expiry TIMESTAMPTZ,
  payload JSON NOT NULL,
  _run_id VARCHAR NOT NULL,
  _loaded_at TIMESTAMPTZ NOT NULL
);

CREATE TABLE IF NOT EXISTS _etl_event_bookmarks (
  job VARCHAR NOT NULL,
  stream VARCHAR NOT NULL,
  through_seq BIGINT NOT NULL,
  updated_at TIMESTAMPTZ NOT NULL,
  run_id VARCHAR NOT NULL,
  PRIMARY KEY (job, stream)
);
