-- Whether the analysts' schema of views holds views of the pipeline's own _etl_ tables too
-- (destination.analysts.pipeline_tables, default false: analysts read the data alone, operators the bookkeeping in
-- the warehouse's schema). The next run, backfill or demo records the setting and drops the _etl_ views it leaves out.
ALTER TABLE _etl_analysts ADD COLUMN IF NOT EXISTS pipeline_tables BOOLEAN NOT NULL DEFAULT FALSE;
