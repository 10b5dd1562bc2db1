-- A multiple-choice custom field is split into rows of account_custom_fields, one per option its value names
-- (docs/warehouse.md, "Custom fields and their options"): the key gains `position` (1, 2, … in the value's order; 1 for
-- every other field, so a field that is not multiple keeps exactly one row), and `label` holds a choice field's
-- option label. Rows loaded before are position 1 with no label until their customer is loaded again (or replayed).
ALTER TABLE account_custom_fields ADD COLUMN IF NOT EXISTS position integer NOT NULL DEFAULT 1;
ALTER TABLE account_custom_fields ADD COLUMN IF NOT EXISTS label text;
ALTER TABLE account_custom_fields DROP CONSTRAINT IF EXISTS account_custom_fields_pkey;
ALTER TABLE account_custom_fields ADD PRIMARY KEY (customer_id, field_name, position);
