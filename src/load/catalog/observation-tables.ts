import { table, type TableDoc } from './table-doc.js';

/** The columns of a state observation's run (docs/history.md). */
const RUN_COLUMNS: Array<[string, string]> = [
  ['observed_at', 'The first ask of the run (UTC).'],
  [
    'last_observed_at',
    'The last ask of the run (UTC): every ask of the customer from observed_at through it found this content.',
  ],
];

/** The observations the state streams' history is rebuilt from, and the customers each asked. */
export const OBSERVATION_TABLES: readonly TableDoc[] = [
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
];
