-- The integrations the configured integration token named when `loyalty-etl check` asked the service
-- (POST /accounts/integrations): which integration the credentials are, and when it was last seen. Never its
-- secrets (apiKey, password, sharedSecret, the client's apiToken): they are read from no answer into any table.

CREATE TABLE IF NOT EXISTS _etl_integrations (
  integration_id BIGINT NOT NULL,
  title text,
  shop_domain text,
  client_title text,
  created_at TIMESTAMPTZ,
  last_seen_at TIMESTAMPTZ NOT NULL,
  PRIMARY KEY (integration_id)
);
