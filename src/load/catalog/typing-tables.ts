import { table, type TableDoc } from './table-doc.js';

/** Columns made at run time, their types and the evidence for them, the changes of what analysts read, and the views loyalty-etl keeps. */
export const TYPING_TABLES: readonly TableDoc[] = [
  table(
    '_etl_columns',
    ['table_name', 'source_key'],
    'pipeline',
    'Which source key each cf_ column of accounts and each q_ column of a survey view holds.',
    [
      ['table_name', 'The table or view.'],
      ['column_name', 'The column.'],
      ['source_key', 'The custom field name or question code, unchanged.'],
      ['added_at', 'When the column was made.'],
    ],
  ),
  table(
    '_etl_typed_columns',
    ['table_name', 'column_name'],
    'pipeline',
    'The typed columns of accounts_typed, and how they are read.',
    [
      ['table_name', 'accounts.'],
      ['column_name', 'The text cf_ column.'],
      ['typed_column', 'Its typed column in accounts_typed.'],
      ['source_key', "The custom field's name."],
      ['kind', "date, number, boolean, or label (a choice field's option key read as its label)."],
      [
        'format',
        'The pattern it is read by (NULL: read by the values seen; for label, the options as [[key, label], …]).',
      ],
    ],
  ),
  table('_etl_typed_values', [], 'pipeline', 'Each distinct text of a typed column, read as its type.', [
    ['column_name', 'The cf_ column.'],
    ['raw_value', 'The text.'],
    ['value', 'It read as its type (YYYY-MM-DD, a plain decimal, true/false); NULL when it is no value of the type.'],
  ]),
  table(
    '_etl_type_evidence',
    ['table_name', 'survey_id', 'name'],
    'pipeline',
    'What typed columns are decided by: per survey question and per custom field, how many values there are and how many fit each type. Kept by every commit from the rows it changed.',
    [
      ['table_name', 'survey_answers or account_custom_fields.'],
      ['survey_id', "The survey of the question (see surveys); '' for a custom field."],
      ['name', 'The question code, or the custom field as the service names it.'],
      ['value_count', 'Its values that are not NULL.'],
      ['fit_integer', 'Of them, whole numbers of up to 9 digits.'],
      ['fit_decimal', 'Of them, decimal numbers.'],
      ['fit_boolean', 'Of them, true/false, yes/no or y/n.'],
      ['fit_date', 'Of them, ISO days (YYYY-MM-DD).'],
    ],
  ),
  table(
    '_etl_type_rules',
    ['table_name'],
    'pipeline',
    'The rule the evidence of each table in _etl_type_evidence was counted by: evidence counted by another rule, or by none, is counted again from the whole table.',
    [
      ['table_name', 'survey_answers or account_custom_fields.'],
      ['rule', 'A hash of the counting rule.'],
      ['updated_at', 'When the evidence was last counted whole (UTC).'],
      ['run_id', 'The run that counted it.'],
    ],
  ),
  table(
    '_etl_unparsed_values',
    ['table_name', 'column_name'],
    'pipeline',
    'Per typed custom field: how many accounts hold a text that is no value of its type.',
    [
      ['table_name', 'accounts.'],
      ['column_name', 'The cf_ column.'],
      ['typed_column', 'Its typed column.'],
      ['source_key', "The custom field's name."],
      ['kind', 'date, number or boolean.'],
      ['format', 'The pattern it is read by.'],
      ['rows_unparsed', 'Accounts whose text did not parse.'],
      ['distinct_values', 'Distinct texts that did not parse.'],
      ['example', 'One of them.'],
    ],
  ),
  table(
    '_etl_schema_changes',
    [],
    'analysts',
    'Every change of the tables and views analysts read, one row each: a published column keeps its name and type, so views and columns are only added, and values that no longer fit a column are said here (destination.analysts.schema_contract).',
    [
      ['changed_at', 'When the change was committed (UTC).'],
      ['run_id', 'The run that made it; see _etl_runs.'],
      ['object_name', 'The table or view.'],
      ['column_name', 'The column; NULL for a whole view.'],
      [
        'change',
        'view_added, column_added, column_typed (a column made before it had values, typed by its first ones), values_no_longer_fit, values_fit_again, type_column_added (a column for the new type, under evolve), and column_retyped, column_retired, view_retired (which loyalty-etl never does).',
      ],
      ['from_type', 'The type before, or the type the column keeps.'],
      ['to_type', 'The type after, or the type the values now read as.'],
      ['source_key', 'The question code or custom field the column holds.'],
      ['reason', 'Why, in words.'],
      ['value_count', 'How many values it concerns: those now NULL in the column, or those the new column holds.'],
    ],
  ),
  table('_etl_views', ['view_name'], 'pipeline', 'The views loyalty-etl made and keeps, with their definitions.', [
    ['view_name', 'The view.'],
    ['definition', 'Its SELECT.'],
  ]),
];
