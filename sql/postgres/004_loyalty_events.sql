-- Loyalty webhook events stored by `loyalty-etl webhook`, and how far each job's postings stream has read them
-- (PostgreSQL). event_key is derived from the body (docs/webhook.md, "Events and their keys"); seq numbers events in
-- the order they were committed; the postings selection `webhook` asks for the customers of events after its
-- bookmark.

CREATE TABLE IF NOT EXISTS loyalty_events (
  event_key text PRIMARY KEY,
  seq bigint NOT NULL UNIQUE,
  received_at timestamptz NOT NULL,
  event_trigger text NOT NULL,
  origin_source text,
  country_iso text,
  customer_id text NOT NULL,
  phone text,
  tier_name text,
  tier_order integer,
  points numeric(18,4),
  cumulative_credit numeric(18,4),
  point_expiry timestamptz,
  payload jsonb NOT NULL,
  _run_id text NOT NULL,
  _loaded_at timestamptz NOT NULL
);

CREATE TABLE IF NOT EXISTS _etl_event_bookmarks (
  job text NOT NULL,
  stream text NOT NULL,
  through_seq bigint NOT NULL,
  updated_at timestamptz NOT NULL,
  run_id text NOT NULL,
  PRIMARY KEY (job, stream)
);
