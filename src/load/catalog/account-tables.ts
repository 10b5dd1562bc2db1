import { table, type TableDoc } from './table-doc.js';

export const ACCOUNT_COLUMNS: Array<[string, string]> = [
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

/** The customer directory: accounts, their custom fields, history and typed view. */
export const ACCOUNT_TABLES: readonly TableDoc[] = [
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
];

/** Reference data: the profiles and their custom fields. */
export const PROFILE_TABLES: readonly TableDoc[] = [
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
];
