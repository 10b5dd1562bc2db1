-- Webhook events that were acknowledged but could not be stored in loyalty_events, each with the reason, so that
-- no single event stops a night (docs/webhook.md, "Quarantine"). `body` is the event's body as received, made
-- storable text; NULL for a spool file that held no event. `status` and the status page count these rows.

CREATE TABLE IF NOT EXISTS _etl_event_quarantine (
  quarantined_at timestamptz NOT NULL,
  received_at timestamptz,
  event_key text,
  customer_id text,
  reason text NOT NULL,
  spool_file text,
  body text,
  _run_id text NOT NULL
);
