-- A multiple-choice custom field is split into rows of account_custom_fields, one per option its value names
-- (docs/warehouse.md, "Custom fields and their options"): the key gains `position` (1, 2, … in the value's order; 1 for
-- every other field, so a field that is not multiple keeps exactly one row), and `label` holds a choice field's
-- option label. Data tables declare no key on DuckDB (005_unkeyed_data_tables.sql): the merge holds it. Rows loaded
-- before are position 1 with no label until their customer is loaded again (or replayed).
ALTER TABLE account_custom_fields ADD COLUMN IF NOT EXISTS position INTEGER DEFAULT 1;
UPDATE account_custom_fields SET position = 1 WHERE position IS NULL;
ALTER TABLE account_custom_fields ALTER COLUMN position SET NOT NULL;
ALTER TABLE account_custom_fields ADD COLUMN IF NOT EXISTS label VARCHAR;
