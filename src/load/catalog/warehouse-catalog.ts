/**
 * What every table and view of the warehouse holds, in words: the source of the comments written on them in both
 * warehouses (`table-comments.ts`) and of `loyalty-etl catalog` (dbt sources, a data dictionary, JSON). Columns
 * made at run time (a custom field's `cf_` column, a survey view's `q_` columns, typed columns) are described from
 * `_etl_columns` and `_etl_typed_columns` instead; a history or observations table borrows the descriptions of the
 * table it keeps versions of.
 */
export interface TableDoc {
  name: string;
  /** What one row is, and where it comes from. */
  description: string;
  /** The columns that identify a row (empty: none). */
  key: readonly string[];
  /** Whether analysts read it (data) or the pipeline keeps it for itself (`_etl_` tables). */
  audience: 'analysts' | 'pipeline';
  /** Column name → description; `COMMON_COLUMNS` and the borrowed table fill in the rest. */
  columns: ReadonlyMap<string, string>;
  /** The table whose column descriptions this one borrows (a history or observations table). */
  borrows?: string;
}

/** Columns many tables carry, described once. */
export const COMMON_COLUMNS: ReadonlyMap<string, string> = new Map([
  ['_window_start', 'The first day of the load window the row was loaded from (days in source.timezone).'],
  ['_run_id', 'The run (or backfill, or receiver) that wrote the row; see _etl_runs.'],
  ['_loaded_at', 'When the row was written to the warehouse (UTC): the freshness column.'],
  [
    'valid_from',
    'When this version started (inclusive): the day of the window, or the instant of the observation, that first served it.',
  ],
  ['valid_to', 'When this version ended (exclusive): the valid_from of the next version; NULL while current.'],
  ['is_current', 'Whether this is the current version (valid_to IS NULL).'],
  ['content_hash', "MD5 of the row's content: consecutive observations with the same hash are one version."],
  ['observed_at', 'When the service was asked for this customer (UTC).'],
  ['customer_id', "The customer's id in the service (customerId)."],
  ['run_id', 'The run that wrote the row; see _etl_runs.'],
  ['job', 'The job of jobs.yaml.'],
  ['stream', 'The stream: accounts, surveys, loyalty_postings, loyalty_status or vouchers.'],
  ['updated_at', 'When the row was last written (UTC).'],
  [
    '_unlisted',
    "The record's members the service sent that the spec does not list, as JSON keyed by their path in the record (NULL when none); see _etl_unlisted_fields. May hold personal data: left out of what analysts read under hash and drop.",
  ],
]);

const ACCOUNT_COLUMNS: Array<[string, string]> = [
  ['customer_id', "The customer's id in the service (customerId): the key."],
  [
    'phone',
    'Phone number as the service holds it. Personal data: hashed or dropped in what analysts read, per destination.analysts.personal_data.',
  ],
  [
    'email',
    'E-mail address. Personal data: hashed or dropped in what analysts read, per destination.analysts.personal_data.',
  ],
  [
    'first_name',
    'First name. Personal data: hashed or dropped in what analysts read, per destination.analysts.personal_data.',
  ],
  [
    'last_name',
    'Last name. Personal data: hashed or dropped in what analysts read, per destination.analysts.personal_data.',
  ],
  [
    'birthdate',
    'Date of birth. Personal data: hashed or dropped in what analysts read, per destination.analysts.personal_data.',
  ],
  ['source', 'Where the customer signed up, as the service names it.'],
  ['profile_set_at', 'When the profile was last set at the service (UTC).'],
  ['country', 'Country of the customer.'],
  ['customer_since', 'When the customer first became a customer (UTC).'],
  ['member_since', 'When the customer joined the loyalty program (UTC).'],
  ['nationality', 'Nationality.'],
  ['gender', 'Gender, as the service codes it.'],
  ['city', 'City.'],
  ['language', 'Preferred language.'],
];

const POSTING_COLUMNS: Array<[string, string]> = [
  [
    'posting_id',
    'Derived key: SHA-256 of the customer and every field of the posting (and its occurrence, for exact duplicates).',
  ],
  ['customer_id', 'The customer the posting belongs to.'],
  ['posted_at', 'When the posting was recorded (postingDate, UTC).'],
  ['txn_at', 'When the transaction happened (transactionDate, UTC).'],
  ['credit', 'Points credited.'],
  ['credit_value', 'Value of the points credited, in currency.'],
  ['debit', 'Points debited (redeemed or expired).'],
  ['debit_value', 'Value of the points debited, in currency.'],
  ['award_on', 'The amount the points were awarded on.'],
  ['currency', 'Currency of the values.'],
  ['receipt', 'Receipt number of the transaction.'],
  ['branch_name', 'Branch where the transaction happened.'],
  ['brand_name', 'Brand of the branch.'],
  ['country_iso', "ISO code of the wallet's country."],
  ['country', 'Country name of the wallet.'],
  ['tier_order', "Rank of the customer's tier at the posting (higher is better)."],
  ['tier_name', "Name of the customer's tier at the posting."],
  ['type', 'Type code of the posting, as the service sends it.'],
  ['posting_type', 'Posting type code, as the service sends it.'],
];

const STATUS_COLUMNS: Array<[string, string]> = [
  ['customer_id', 'The customer.'],
  ['program_name', 'Loyalty program name.'],
  ['program_logo', 'Loyalty program logo URL.'],
  ['tier_name', 'Current tier.'],
  ['tier_order', 'Rank of the tier (higher is better).'],
  ['tier_logo', 'Tier logo URL.'],
  ['tier_expires_at', "The tier's next review (UTC)."],
  ['tier_benefits', "The tier's benefits, as text."],
  ['points_expiring', 'The next points to expire (0 when none).'],
  ['points_expiring_on', 'The last valid day of the points expiring.'],
  ['to_next_tier', 'Points still needed for the next tier.'],
  ['cumulative_credit', "Points credited over the customer's life."],
  ['observed_at', 'When the service was asked (UTC): the state is as of this instant.'],
];

const WALLET_COLUMNS: Array<[string, string]> = [
  ['customer_id', 'The customer.'],
  ['country_iso', "ISO code of the wallet's country."],
  ['country_name', 'Country name of the wallet.'],
  ['currency', 'Currency of the wallet.'],
  ['points', 'Points in the wallet.'],
  ['value', 'Value of the points, in currency.'],
  ['redeemable_points', 'Points that can be redeemed now.'],
  ['redeemable_value', 'Value of the redeemable points.'],
];

const BALANCE_COLUMNS: Array<[string, string]> = [
  ['customer_id', 'The customer.'],
  ['expires_at', 'When these points expire (UTC).'],
  ['points_gained', 'Points gained that expire at expires_at.'],
  ['points_redeemed', 'Of those, points redeemed.'],
  ['points_expired', 'Of those, points expired.'],
];

const VOUCHER_COLUMNS: Array<[string, string]> = [
  ['customer_id', 'The customer holding the voucher.'],
  ['code', 'Voucher code.'],
  ['title', 'Voucher title.'],
  ['icon', 'Voucher icon URL.'],
  ['value', 'Voucher value.'],
  ['value_type', 'What value means (an amount, a percentage…), as the service says.'],
  ['expires_on', 'Last valid day.'],
  ['enabled', 'Whether the voucher is enabled.'],
  ['status', 'active, redeemed or expired.'],
  ['redeemed_at', 'When it was redeemed (UTC).'],
  ['redeemed_branch', 'Where it was redeemed.'],
  ['first_seen_at', 'The first observation that listed it (UTC).'],
  ['last_seen_at', 'The last observation that listed it (UTC).'],
  ['gone_at', 'The first observation that no longer listed it (UTC); NULL while listed.'],
];

/** The columns of a state observation's run (docs/history.md). */
const RUN_COLUMNS: Array<[string, string]> = [
  ['observed_at', 'The first ask of the run (UTC).'],
  [
    'last_observed_at',
    'The last ask of the run (UTC): every ask of the customer from observed_at through it found this content.',
  ],
];

function table(
  name: string,
  key: string[],
  audience: TableDoc['audience'],
  description: string,
  columns: Array<[string, string]>,
  borrows?: string,
): TableDoc {
  return { name, key, audience, description, columns: new Map(columns), ...(borrows ? { borrows } : {}) };
}

/** Every table and fixed view loyalty-etl makes, by name. */
export const WAREHOUSE_TABLES: readonly TableDoc[] = [
  table(
    'accounts',
    ['customer_id'],
    'analysts',
    'One row per customer: the latest profile the account export served, and one cf_ column per custom field (text).',
    ACCOUNT_COLUMNS,
  ),
  table(
    'account_custom_fields',
    ['customer_id', 'field_name', 'position'],
    'analysts',
    "The custom fields of each customer's latest profile, long form, with their original names: one row per field, and one per chosen option of a multiple-choice field.",
    [
      ['field_name', "The custom field's name in the service (customFieldMap key), unchanged."],
      [
        'position',
        "1 for a field that holds one value; for a multiple-choice field, the option's place (1, 2, …) in the order the value named them.",
      ],
      [
        'value',
        "The value as the service sent it (text); for a multiple-choice field, one chosen option's key (NULL when the value could not be read as one list of options: see _etl_field_rejects).",
      ],
      [
        'label',
        "A choice field's option label (profile_fields.options) for this value; NULL for other fields and values that are no option.",
      ],
    ],
  ),
  table(
    'accounts_history',
    ['customer_id', 'valid_from'],
    'analysts',
    'Every version of every customer, one row per version: the columns of accounts and its custom fields as JSON.',
    [
      [
        'custom_fields',
        'The custom fields of this version, {"name": "value"} with their original names (JSON); a multiple-choice field\'s value is its option keys as a JSON array.',
      ],
    ],
    'accounts',
  ),
  table(
    'accounts_typed',
    ['customer_id'],
    'analysts',
    'accounts, with a typed column (cf_<name>_date, _number, _boolean) right after each custom field whose definition or values give it a type.',
    [],
    'accounts',
  ),
  table(
    'survey_responses',
    ['response_id'],
    'analysts',
    "One row per survey answer record (a customer answering a survey once). The answers are in survey_answers and in the survey's view.",
    [
      [
        'response_id',
        'Derived key: SHA-256 of the survey, customer, time, every field and every answer (and the occurrence, for exact duplicates).',
      ],
      ['survey_id', 'The survey answered: derived from its question set; see surveys.'],
      ['answered_at', 'When the survey was answered (UTC).'],
      ['brand', 'Brand the answer is about.'],
      ['branch', 'Branch the answer is about.'],
      ['staff', 'Staff member named in the answer record.'],
      ['operator', 'Operator who recorded the answer.'],
      ['receipt', 'Receipt number the answer is about.'],
      ['tier_name', "The customer's tier when answering."],
      ...ACCOUNT_COLUMNS.filter(([c]) => ['first_name', 'last_name', 'phone', 'email'].includes(c)),
    ],
  ),
  table(
    'survey_answers',
    ['response_id', 'question_code'],
    'analysts',
    'Every answer of every response, long form, as the text the service sent.',
    [
      ['response_id', 'The response; see survey_responses.'],
      [
        'question_code',
        "The question's code in its survey (the same code may name different questions in different surveys).",
      ],
      ['answer', 'The answer, as text.'],
    ],
  ),
  table('survey_questions', ['survey_id', 'question_code'], 'analysts', "Each survey's questions.", [
    ['survey_id', 'The survey.'],
    ['question_code', "The question's code in the survey."],
    ['question_text', 'The question as asked.'],
    [
      'question_order',
      'Its place in the survey, from 1 (the first labels the survey); NULL for questions loaded before it was kept.',
    ],
  ]),
  table(
    'surveys',
    ['survey_id'],
    'analysts',
    'One row per survey, rebuilt at every surveys load: its label, counts and view.',
    [
      ['survey_id', "Derived key: SHA-256 of the survey's question set (a changed set is a new survey)."],
      ['label', "The text of the survey's first question."],
      ['question_count', 'Questions in the survey.'],
      ['responses', 'Rows of survey_responses for it.'],
      ['first_answer_at', 'Its first answer (UTC).'],
      ['last_answer_at', 'Its last answer (UTC).'],
      ['view_name', 'The view holding its responses with a typed column per question.'],
    ],
  ),
  table(
    'survey_question_columns',
    ['survey_id', 'question_code'],
    'analysts',
    "Where each survey question's answers are: its survey's view and column, the column's type and the answers that do not fit it.",
    [
      ['survey_id', 'The survey.'],
      ['question_code', "The question's code."],
      ['view_name', "The survey's view."],
      ['column_name', "The question's column in that view."],
      ['answer_type', 'integer, decimal, boolean, date or text: the first type at least 80% of the answers fit.'],
      ['answers', 'Answers that are not NULL.'],
      ['answers_unparsed', 'Answers that do not fit answer_type: NULL in the view, text in survey_answers.'],
    ],
  ),
  table(
    'loyalty_postings',
    ['posting_id'],
    'analysts',
    'One row per loyalty posting (points credited or debited), per customer.',
    POSTING_COLUMNS,
  ),
  table(
    'loyalty_status',
    ['customer_id'],
    'analysts',
    "Each customer's loyalty standing as last observed.",
    STATUS_COLUMNS,
  ),
  table(
    'loyalty_wallets',
    ['customer_id', 'country_iso', 'currency'],
    'analysts',
    'Points per customer, country and currency, as last observed.',
    WALLET_COLUMNS,
  ),
  table(
    'loyalty_balance_details',
    ['customer_id', 'expires_at'],
    'analysts',
    'Points gained, redeemed and expired per customer and expiry instant, as last observed.',
    BALANCE_COLUMNS,
  ),
  table(
    'vouchers',
    ['customer_id', 'code'],
    'analysts',
    'Every voucher ever listed for a customer; kept when it leaves the list (gone_at).',
    VOUCHER_COLUMNS,
  ),
  table(
    'loyalty_status_history',
    ['customer_id', 'valid_from'],
    'analysts',
    'Every version of loyalty_status observed.',
    [],
    'loyalty_status',
  ),
  table(
    'loyalty_wallets_history',
    ['customer_id', 'country_iso', 'currency', 'valid_from'],
    'analysts',
    'Every version of loyalty_wallets observed.',
    [],
    'loyalty_wallets',
  ),
  table(
    'loyalty_balance_details_history',
    ['customer_id', 'expires_at', 'valid_from'],
    'analysts',
    'Every version of loyalty_balance_details observed.',
    [],
    'loyalty_balance_details',
  ),
  table(
    'vouchers_history',
    ['customer_id', 'code', 'valid_from'],
    'analysts',
    'Every version of each voucher as served.',
    [],
    'vouchers',
  ),
  table(
    'profiles',
    ['profile_id'],
    'analysts',
    "The service's customer profiles (sets of custom fields), refreshed whole on every run.",
    [
      ['profile_id', "The profile's id."],
      ['label', 'Its label.'],
      ['main', 'Whether it is the main profile.'],
      ['used', 'Whether it is in use.'],
      ['main_profile_id', 'The main profile it belongs to.'],
      ['created_by', 'Who created it.'],
    ],
  ),
  table(
    'profile_fields',
    ['profile_id', 'field_id'],
    'analysts',
    "Each profile's custom field definitions, refreshed whole on every run.",
    [
      ['profile_id', 'The profile.'],
      ['field_id', "The field's id."],
      ['name', "The custom field's key (customFieldMap name): joins _etl_columns.source_key."],
      ['label', "The field's label."],
      ['type_id', "The service's type code; the spec gives it no meaning, so it types nothing."],
      ['render_type', 'How the service renders it.'],
      ['order_value', 'Its place in the form.'],
      ['required', 'Whether it is required.'],
      ['multiple', 'Whether it holds several values.'],
      ['is_business', 'Whether it is a business field.'],
      ['column_number', 'Its column in the form.'],
      ['format', 'Its format (a date or number pattern): what types it for sure.'],
      ['default_value', 'Its default value.'],
      ['options', 'Its choices (keys and labels), as JSON.'],
      ['definition', 'The whole definition as the service sent it (JSON).'],
    ],
  ),
  table('loyalty_events', ['event_key'], 'analysts', 'Loyalty webhook calls received, one row per call.', [
    ['event_key', 'Derived key of the call.'],
    ['seq', 'Commit order of the call.'],
    ['received_at', 'When it was received (UTC).'],
    ['event_trigger', 'What triggered it.'],
    ['origin_source', 'Where it came from.'],
    ['country_iso', 'Country of the wallet.'],
    ['phone', ACCOUNT_COLUMNS.find(([c]) => c === 'phone')![1]],
    ['tier_name', 'Tier after the event.'],
    ['tier_order', 'Rank of the tier.'],
    ['points', 'Wallet balance after the event.'],
    ['cumulative_credit', "Points credited over the customer's life."],
    ['point_expiry', 'Next points expiry.'],
    [
      'payload',
      'The body as received (JSON). Holds personal data: left out of what analysts read under hash and drop.',
    ],
  ]),
  table(
    '_etl_watermarks',
    ['job', 'stream'],
    'pipeline',
    'Per job and stream, the day through which every window is loaded.',
    [['complete_through', 'Every window up to this day (inclusive) is loaded.']],
  ),
  table(
    '_etl_windows',
    ['job', 'stream', 'window_start'],
    'pipeline',
    'Every load window of every job and stream: status, counts and claim.',
    [
      ['window_start', 'First day of the window.'],
      ['window_end', 'Last day of the window (inclusive).'],
      ['status', 'pending, done or failed.'],
      ['rows_extracted', 'Records read from the source.'],
      ['rows_loaded', 'Rows written.'],
      ['rows_rejected', 'Records rejected into _etl_rejects.'],
      ['requests', 'Requests the window took.'],
      ['finished_at', 'When it finished (UTC).'],
      ['error', 'Why it failed.'],
      ['claimed_by', 'The run working it now.'],
      ['claimed_at', 'When it was claimed.'],
      ['backfill_id', 'The backfill that last took it.'],
    ],
  ),
  table('_etl_runs', ['run_id'], 'pipeline', 'Every run, backfill and demo.', [
    ['command', 'The command: run, backfill, demo…'],
    ['started_at', 'When it started (UTC).'],
    ['finished_at', 'When it ended (UTC).'],
    ['status', 'running, succeeded, failed, interrupted or abandoned.'],
    ['error', 'Why it failed.'],
    ['requests', 'Requests it made.'],
    [
      'retries',
      'Requests it tried again (429, 5xx, time-outs, dropped connections); NULL for runs recorded before it was kept.',
    ],
    ['host', 'Host it ran on.'],
    ['pid', 'Its process id.'],
    ['expires_at', 'When its lease ends unless renewed.'],
    ['backfill_id', 'The backfill it worked on.'],
  ]),
  table('_etl_backfills', ['backfill_id'], 'pipeline', 'Backfills, their scope and status.', [
    ['backfill_id', 'The backfill.'],
    ['scope', 'What it covers.'],
    ['generation', 'Its generation (a newer one supersedes it).'],
    ['streams', 'Its streams.'],
    ['range_from', 'First day.'],
    ['range_to', 'Last day.'],
    ['status', 'open, done or superseded.'],
    ['started_at', 'When it started.'],
    ['finished_at', 'When it was done.'],
  ]),
  table('_etl_locks', ['lock_name'], 'pipeline', 'Locks: run:<job> is held by the live run of the job.', [
    ['lock_name', 'The lock.'],
    ['acquired_at', 'When it was taken.'],
  ]),
  table('_etl_rejects', [], 'pipeline', 'Records that were not loaded: the raw record and the reason.', [
    ['window_start', 'The window the record was read in.'],
    ['payload', 'The raw record as JSON. Holds personal data: left out of what analysts read under hash and drop.'],
    ['error', 'Why it was rejected.'],
    ['rejected_at', 'When (UTC).'],
  ]),
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
  table('_etl_views', ['view_name'], 'pipeline', 'The views loyalty-etl made and keeps, with their definitions.', [
    ['view_name', 'The view.'],
    ['definition', 'Its SELECT.'],
  ]),
  table(
    '_etl_account_windows',
    ['customer_id', '_window_start'],
    'pipeline',
    'Which customers the accounts export listed in which window (its change signal).',
    [],
  ),
  table(
    '_etl_accounts_observations',
    ['customer_id', '_window_start'],
    'pipeline',
    'What each window served of each customer: what accounts_history is rebuilt from.',
    [
      ['custom_fields', 'The custom fields served, as JSON.'],
      ['_set_on', "The day (in source.timezone) the record's profileSet names: no version starts before it."],
    ],
    'accounts',
  ),
  table(
    '_etl_loyalty_status_observations',
    ['customer_id', 'observed_at'],
    'pipeline',
    'Each loyalty_status row as its customer was asked, one row per run of asks that found the same content.',
    RUN_COLUMNS,
    'loyalty_status',
  ),
  table(
    '_etl_loyalty_wallets_observations',
    ['customer_id', 'country_iso', 'currency', 'observed_at'],
    'pipeline',
    'Each loyalty_wallets row as its customer was asked, one row per run of asks that found the same content.',
    RUN_COLUMNS,
    'loyalty_wallets',
  ),
  table(
    '_etl_loyalty_balance_details_observations',
    ['customer_id', 'expires_at', 'observed_at'],
    'pipeline',
    'Each loyalty_balance_details row as its customer was asked, one row per run of asks that found the same content.',
    RUN_COLUMNS,
    'loyalty_balance_details',
  ),
  table(
    '_etl_vouchers_observations',
    ['customer_id', 'code', 'observed_at'],
    'pipeline',
    'Each vouchers row as its customer was asked, one row per run of asks that found the same content.',
    RUN_COLUMNS,
    'vouchers',
  ),
  table(
    '_etl_loyalty_status_asked',
    ['customer_id', 'observed_at'],
    'pipeline',
    'Every ask of a customer the loyalty state streams loaded.',
    [],
  ),
  table(
    '_etl_vouchers_asked',
    ['customer_id', 'observed_at'],
    'pipeline',
    'Every ask of a customer the vouchers stream loaded.',
    [],
  ),
  table(
    '_etl_customer_observations',
    ['stream', 'customer_id'],
    'pipeline',
    'When each state stream last asked each customer, and the outcome.',
    [['outcome', 'answered, not_found (1005) or unaskable.']],
  ),
  table(
    '_etl_analysts',
    ['analysts_schema'],
    'pipeline',
    "PostgreSQL: what analysts read of personal data, the schema of views they are granted, and whether it shows the pipeline's own tables. Never shown to analysts.",
    [
      ['analysts_schema', 'The schema of views for analysts (destination.analysts.schema).'],
      ['personal_data', 'keep, hash or drop (destination.analysts.personal_data).'],
      ['key', 'Under hash: SHA-256 of the salt (LOYALTY_PII_SALT) the views hash personal data with.'],
      [
        'pipeline_tables',
        "Whether the analysts' schema holds views of the pipeline's _etl_ tables too (destination.analysts.pipeline_tables).",
      ],
    ],
  ),
  table('_etl_migrations', ['version'], 'pipeline', 'DDL files of sql/ applied to this warehouse.', [
    ['version', 'The file, without .sql.'],
    ['applied_at', 'When it was applied.'],
    ['release', 'The release of loyalty-etl that applied it (NULL: before releases were recorded).'],
  ]),
  table(
    '_etl_releases',
    ['version'],
    'pipeline',
    'Every release of loyalty-etl that opened this warehouse; a release refuses a warehouse a newer one opened.',
    [
      ['version', 'The release (semantic version).'],
      ['first_opened_at', 'When it first opened the warehouse.'],
    ],
  ),
  table(
    '_etl_pii_key',
    ['slot'],
    'pipeline',
    'The key personal data is hashed with for analysts: made at first use, or from LOYALTY_PII_SALT. Never copied, exported or shown to analysts.',
    [
      ['slot', 'personal_data: the one row.'],
      ['key', 'The key (a secret: 64 hex digits).'],
      ['origin', 'generated (made by the pipeline) or LOYALTY_PII_SALT.'],
      ['created_at', 'When the key was first kept.'],
      ['changed_at', 'When LOYALTY_PII_SALT last changed it (NULL: never).'],
    ],
  ),
  table(
    '_etl_field_rejects',
    [],
    'pipeline',
    'Fields that could not be read: the field loaded as NULL and its record kept; one row per field, replaced when its window is loaded again.',
    [
      ['record_key', 'The record the field belongs to (its key, e.g. customer and voucher code).'],
      ['field', 'The field as the service names it.'],
      [
        'raw_value',
        'The value as served, as text. May hold personal data: left out of what analysts read under hash and drop.',
      ],
      ['error', 'Why it could not be read.'],
      ['window_start', 'The first day of the window whose load read it.'],
      ['rejected_at', 'When it was read (UTC).'],
    ],
  ),
  table(
    '_etl_event_quarantine',
    [],
    'pipeline',
    'Webhook events acknowledged but not storable in loyalty_events, each with the reason: set aside so that no event stops a night.',
    [
      ['quarantined_at', 'When the event was set aside (UTC).'],
      ['received_at', 'When the receiver acknowledged it (UTC), where known.'],
      ['event_key', 'The key the event would have had in loyalty_events, where known.'],
      ['customer_id', 'The customer the event names, where readable.'],
      ['reason', 'Why it could not be stored.'],
      ['spool_file', 'The spool file it came from (DuckDB), moved to the quarantine folder.'],
      ['body', 'The body as received, made storable text; NULL when the file held none.'],
    ],
  ),
  table(
    '_etl_unlisted_fields',
    ['record_type', 'field_path'],
    'pipeline',
    'Every member the service sent that the spec does not list: where it is kept, when it was first and last seen, in how many records.',
    [
      ['record_type', 'The kind of source record (account, survey answer, posting, loyalty status, voucher, …).'],
      ['field_path', 'The member by its path in the record (colour, tier.colour, answers[].mood).'],
      ['table_name', 'The table whose _unlisted column keeps it.'],
      ['first_seen_run', 'The run that first loaded it.'],
      ['first_seen_at', 'When it was first loaded (UTC).'],
      ['last_seen_run', 'The last run that loaded it.'],
      ['last_seen_at', 'When it was last loaded (UTC).'],
      ['records', 'How many records carried it, over every load.'],
    ],
  ),
  table(
    '_etl_integrations',
    ['integration_id'],
    'pipeline',
    'The integrations the integration token named when check asked the service: which one the credentials are. Never its secrets.',
    [
      ['integration_id', "The integration's id in the service."],
      ['title', 'Its title.'],
      ['shop_domain', 'The shop domain it serves.'],
      ['client_title', 'The title of its online API client.'],
      ['created_at', "When it was created (UTC), read from the service's month-name timestamp."],
      ['last_seen_at', 'When check last saw the token name it (UTC).'],
    ],
  ),
  table(
    '_etl_event_bookmarks',
    ['job', 'stream'],
    'pipeline',
    "The last webhook event whose customer each job's streams have asked for.",
    [['through_seq', 'The last event (loyalty_events.seq) handled.']],
  ),
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
