import { addDays } from '../plan/days.js';
import { coverageLine } from '../state/state-coverage.js';
import type { JobStatus } from '../state/status-report.js';
import { table } from './table.js';

/** The human form of `status`: a header, then each section that has something to say, a blank line between. */
export function formatStatus(status: JobStatus): string {
  const sections = [
    streams,
    directory,
    customerState,
    history,
    unlistedFields,
    schemaChanges,
    lockAndEvents,
    backfills,
    runs,
  ].map((section) => section(status));
  const lines = [`job ${status.job} (last closed day ${status.lastClosedDay})`, releaseLine(status)];
  const i = status.integration;
  if (i)
    lines.push(
      `integration: ${JSON.stringify(i.title ?? '(no title)')} (id ${i.integrationId}) on ${i.shopDomain ?? '(no shop domain)'}, created ${i.createdAt ?? '(not sent)'}; last seen by check ${i.lastSeenAt}`,
    );
  for (const section of sections) if (section.length > 0) lines.push('', ...section);
  return `${lines.join('\n')}\n`;
}

/** `warehouse: opened by loyalty-etl 0.5.0 since …, migrated through 015_… by 0.5.0 (this is loyalty-etl 0.5.0)`. */
function releaseLine({ warehouseRelease: warehouse }: JobStatus): string {
  const opened = warehouse.openedBy
    ? `opened by loyalty-etl ${warehouse.openedBy} since ${warehouse.openedSince}`
    : 'opened by no release that records itself';
  const migrated = warehouse.migration
    ? `, migrated through ${warehouse.migration.version}${warehouse.migration.release ? ` by ${warehouse.migration.release}` : ''}`
    : '';
  return `warehouse: ${opened}${migrated} (this is loyalty-etl ${warehouse.release})`;
}

function streams(status: JobStatus): string[] {
  return [
    table(
      [
        'stream',
        'complete through',
        'lag (days)',
        'windows done',
        'failed',
        'pending',
        'rows loaded',
        'rejects',
        'NULL fields',
        'requests',
      ],
      status.streams.map((s) => [
        s.stream,
        s.completeThrough ?? '-',
        s.lagDays ?? '-',
        s.windowsDone,
        s.windowsFailed,
        s.windowsPending,
        s.rowsLoaded,
        s.rejects,
        s.fieldRejects,
        s.requests,
      ]),
    ),
  ];
}

function directory({ directory, lastClosedDay }: JobStatus): string[] {
  if (!directory) return [];
  const loaded = directory.completeThrough >= directory.from;
  const lines = [
    `customer directory: ${directory.customers} customers in accounts; ${loaded ? `every accounts window from ${directory.from} through ${directory.completeThrough} is done` : `not loaded yet (from ${directory.from}): the next run sweeps it`}`,
  ];
  if (loaded && addDays(directory.completeThrough, 1) < lastClosedDay)
    lines.push(
      `  (accounts windows from ${addDays(directory.completeThrough, 1)} on are not all done: postings after that day wait for them)`,
    );
  return lines;
}

function customerState(status: JobStatus): string[] {
  return (status.customerState ?? []).map(coverageLine);
}

function history(status: JobStatus): string[] {
  if (!status.history?.length) return [];
  return [
    'history (versions grow with changes, not with nights)',
    table(
      ['table', 'versions', 'current', 'observations', 'kept'],
      status.history.map((h) => [
        h.table,
        h.versions,
        h.current,
        h.observations,
        h.kept ? 'yes' : 'no (jobs.<name>.history)',
      ]),
    ),
  ];
}

function unlistedFields(status: JobStatus): string[] {
  const fields = status.unlistedFields ?? [];
  if (fields.length === 0) return [];
  return [
    `fields the spec does not list: ${fields.length} (each kept in its table's _unlisted column; docs/warehouse.md)`,
    table(
      ['field', 'record', 'kept in', 'first seen', 'last seen', 'records'],
      fields.map((f) => [
        f.field_path,
        f.record_type,
        `${f.table_name}._unlisted`,
        f.first_seen_at.slice(0, 19),
        f.last_seen_at.slice(0, 19),
        f.records,
      ]),
    ),
  ];
}

function schemaChanges(status: JobStatus): string[] {
  const { changes, total } = status.schemaChanges ?? { changes: [], total: 0 };
  if (total === 0) return [];
  return [
    `schema changes of what analysts read: ${total}${total > changes.length ? `, the last ${changes.length}` : ''} (_etl_schema_changes; docs/warehouse.md)`,
    table(
      ['when', 'run', 'where', 'change', 'from → to', 'values', 'why'],
      changes.map((c) => [
        c.changed_at.slice(0, 19),
        c.run_id,
        c.column_name === null ? c.object_name : `${c.object_name}.${c.column_name}`,
        c.change,
        c.from_type || c.to_type ? `${c.from_type ?? '—'} → ${c.to_type ?? '—'}` : '',
        c.value_count ?? '',
        c.reason,
      ]),
    ),
  ];
}

function lockAndEvents({
  runLock: lock,
  webhookEvents: events,
  spooledEvents: spooled,
  quarantinedEvents: quarantined,
  archive,
}: JobStatus): string[] {
  const lines = [
    lock
      ? `run lock: held by run ${lock.runId}${lock.pid !== null ? ` (pid ${lock.pid}${lock.host ? ` on ${lock.host}` : ''})` : ''} since ${(lock.since ?? '').slice(0, 19)}`
      : 'run lock: free',
  ];
  if (events) {
    lines.push(
      `webhook events: ${events.stored} stored${events.lastReceivedAt ? `, last received ${events.lastReceivedAt.slice(0, 19)}` : ''}; ${events.backlog} not yet asked about by loyalty_postings (bookmark at event ${events.bookmark})`,
    );
  }
  if (spooled)
    lines.push(
      `webhook spool: ${spooled} event${spooled === 1 ? '' : 's'} received and not yet in loyalty_events (the next run or backfill takes them in)`,
    );
  if (quarantined)
    lines.push(
      `webhook quarantine: ${quarantined.events} event${quarantined.events === 1 ? '' : 's'} received but not storable in loyalty_events, last ${(quarantined.lastAt ?? '').slice(0, 19)}; their reasons are in _etl_event_quarantine (docs/webhook.md, "Quarantine")`,
    );
  if (archive) {
    const span = archive.oldest
      ? `, spans begun ${archive.oldest.slice(0, 19)} to ${archive.newest!.slice(0, 19)}`
      : '';
    lines.push(
      `raw archive: ${archive.root}: ${(archive.bytes / 1e6).toFixed(1)} MB in ${archive.files} span file${archive.files === 1 ? '' : 's'}${span}`,
    );
  }
  return lines;
}

function backfills(status: JobStatus): string[] {
  if (status.backfills.length === 0) return [];
  return [
    'backfills',
    table(
      ['backfill', 'range', 'streams', 'status', 'windows done', 'failed', 'workers', 'started'],
      status.backfills.map((b) => [
        b.backfillId,
        `${b.from}..${b.to}`,
        b.streams.join(','),
        b.status,
        `${b.windowsDone}/${b.windowsTotal}`,
        b.windowsFailed,
        b.liveWorkers,
        b.startedAt.slice(0, 19),
      ]),
    ),
  ];
}

function runs(status: JobStatus): string[] {
  return [
    'last runs',
    table(
      ['started', 'command', 'status', 'seconds', 'windows', 'rows', 'rejected', 'requests', 'error'],
      status.runs.map((r) => [
        r.startedAt.slice(0, 19),
        r.command,
        r.status,
        r.durationSeconds ?? '-',
        r.windows,
        r.rowsLoaded,
        r.rowsRejected,
        r.requests ?? '-',
        (r.error ?? '').slice(0, 80),
      ]),
    ),
  ];
}
