-- The releases of loyalty-etl that opened this warehouse, and which release applied each migration: a release refuses
-- a warehouse that a newer one migrated or wrote (src/load/warehouse/migrate.ts).
CREATE TABLE IF NOT EXISTS _etl_releases (
  version         VARCHAR PRIMARY KEY,
  first_opened_at TIMESTAMPTZ NOT NULL
);

ALTER TABLE _etl_migrations ADD COLUMN IF NOT EXISTS release VARCHAR;

-- The key the hashes of personal data are salted with when LOYALTY_PII_SALT is not set (made at first use), or the
-- key of the salt last used: the pipeline's alone, never copied, exported or shown to analysts.
CREATE TABLE IF NOT EXISTS _etl_pii_key (
  slot       VARCHAR PRIMARY KEY,
  key        VARCHAR NOT NULL,
  origin     VARCHAR NOT NULL,
  created_at TIMESTAMPTZ NOT NULL,
  changed_at TIMESTAMPTZ
);
