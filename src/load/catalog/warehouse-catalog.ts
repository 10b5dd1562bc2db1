import { ACCOUNT_TABLES, PROFILE_TABLES } from './account-tables.js';
import { EVENT_TABLES, LOYALTY_TABLES } from './loyalty-tables.js';
import { OBSERVATION_TABLES } from './observation-tables.js';
import { LEDGER_TABLES, UPKEEP_TABLES } from './pipeline-tables.js';
import { SURVEY_TABLES } from './survey-tables.js';
import { COMMON_COLUMNS, type TableDoc } from './table-doc.js';
import { TYPING_TABLES } from './typing-tables.js';

export { COMMON_COLUMNS, type TableDoc } from './table-doc.js';

/** Every table and fixed view loyalty-etl makes, by name: the data tables first, then the pipeline's own (`_etl_`). */
export const WAREHOUSE_TABLES: readonly TableDoc[] = [
  ...ACCOUNT_TABLES,
  ...SURVEY_TABLES,
  ...LOYALTY_TABLES,
  ...PROFILE_TABLES,
  ...EVENT_TABLES,
  ...LEDGER_TABLES,
  ...TYPING_TABLES,
  ...OBSERVATION_TABLES,
  ...UPKEEP_TABLES,
];

/** The description of `table`, by name. */
export function tableDoc(table: string): TableDoc | undefined {
  return WAREHOUSE_TABLES.find((t) => t.name === table);
}

/** The description of a fixed column of `table`: its own, the table it borrows from, or a common one. */
export function columnDescription(table: string, column: string): string | undefined {
  const doc = tableDoc(table);
  return (
    doc?.columns.get(column) ??
    (doc?.borrows ? columnDescription(doc.borrows, column) : undefined) ??
    COMMON_COLUMNS.get(column)
  );
}

/** The columns of every table that hold personal data: what `destination.analysts.personal_data` hashes or drops. */
export const PERSONAL_COLUMNS: ReadonlySet<string> = new Set([
  'phone',
  'email',
  'first_name',
  'last_name',
  'birthdate',
]);

/**
 * Columns that hold records, members or values as the service sent them, personal data included: NULL for analysts
 * under hash and drop. `_unlisted` holds members the spec does not list, which no one has yet said are free of
 * personal data; a field reject's `raw_value` may be a birthdate or a phone the pipeline could not read. A name
 * alone stands for that column in every table; `table.column` for one table's.
 */
/**
 * The pipeline's tables that hold secrets (the analysts' policy and the key of their hashes): never copied, exported,
 * described or shown to analysts, whatever else of the pipeline's own they see.
 */
export const NEVER_FOR_ANALYSTS: ReadonlySet<string> = new Set(['_etl_analysts', '_etl_pii_key']);

export const PERSONAL_PAYLOADS: ReadonlySet<string> = new Set(['payload', '_unlisted', '_etl_field_rejects.raw_value']);
