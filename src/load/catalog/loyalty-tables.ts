import { ACCOUNT_COLUMNS } from './account-tables.js';
import { table, type TableDoc } from './table-doc.js';

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

/** Postings, each customer's loyalty state and vouchers, and their histories. */
export const LOYALTY_TABLES: readonly TableDoc[] = [
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
];

/** The loyalty webhook calls received. */
export const EVENT_TABLES: readonly TableDoc[] = [
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
];
