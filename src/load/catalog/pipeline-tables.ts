import { table, type TableDoc } from './table-doc.js';

/** What the pipeline loaded and when: watermarks, the window ledger, runs, backfills, locks, rejects. */
export const LEDGER_TABLES: readonly TableDoc[] = [
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
      ['retries', 'Of those, the requests tried again after a failure (429, 5xx, a time-out, a dropped connection).'],
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
];

/**
 * The warehouse's upkeep and what the pipeline notes besides its windows: the analysts' policy, migrations,
 * releases, the key of the hashes, field rejects, quarantined events, unlisted fields, integrations, event bookmarks.
 */
export const UPKEEP_TABLES: readonly TableDoc[] = [
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
