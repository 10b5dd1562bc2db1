import { damagedLine, damageOf } from '../load/warehouse/warehouse-damage.js';
import { CommandError, ExitCode } from './exit-codes.js';
import type { JobRunResult } from '../pipeline/job-run-request.js';
import { failuresByStream } from '../pipeline/run-log.js';
import type { UnlistedField } from '../state/unlisted-fields.js';
import { byUrgency, schemaChangeLine, type SchemaChangeRow } from '../state/schema-changes.js';
import type { StreamName } from '../plan/job-plan.js';
import { formatWindow } from '../plan/windows.js';
import { formatDuration } from '../report/format.js';
import { count, plural } from './counts.js';
import { loadedAs, readAs } from './stream-units.js';

/** What one stream did in a run, added up. */
interface StreamTally {
  windows: number;
  loaded: number;
  rejected: number;
  fields: number;
  extracted: number;
  empty: number;
  failed: number;
  firstFailure?: string;
  notAttempted: number;
}

/**
 * One line per stream of what a run loaded, for stdout; every count says what it counts, and a stream's failed
 * windows are named on its own line. The last line: the requests the run made (and retried), and how long it took
 * when `seconds` is given. `notAttempted`: windows a run that stopped early never tried, per stream.
 */
export function summarizeRun(
  result: JobRunResult,
  seconds?: number,
  notAttempted: ReadonlyMap<StreamName, number> = new Map(),
): string {
  const lines = [...tallyRun(result, notAttempted)].map(([stream, s]) => streamLine(stream, s));
  const directory = directoryLine(result);
  if (directory) lines.unshift(directory);
  if (lines.length === 0) lines.push('nothing to load: every window is up to date');
  for (const f of result.newFields) lines.push(newFieldLine(f));
  lines.push(...schemaChangeLines(result.schemaChanges ?? []));
  const retried = result.retries > 0 ? ` (${plural(result.retries, 'retry', 'retries')})` : '';
  lines.push(
    `${count(result.requests)} source requests${retried}${seconds === undefined ? '' : ` in ${formatDuration(seconds)}`}, run ${result.runId}`,
  );
  return lines.join('\n');
}

/** The summary as one JSON object (`--json`), for a scheduler that reads stdout. */
export function runJson(
  result: JobRunResult,
  seconds: number,
  notAttempted: ReadonlyMap<StreamName, number> = new Map(),
): string {
  const { loaded, empty, from, through } = result.directory;
  return `${JSON.stringify({
    runId: result.runId,
    seconds: Math.round(seconds * 10) / 10,
    requests: result.requests,
    retries: result.retries,
    directory: { from, through, windowsRead: loaded.length, windowsEmpty: empty },
    streams: Object.fromEntries(tallyRun(result, notAttempted)),
    failed: result.failed.map((f) => ({ stream: f.stream, window: formatWindow(f.window), error: f.error })),
    newFields: result.newFields.map((f) => ({ record: f.record_type, field: f.field_path, table: f.table_name })),
    schemaChanges: (result.schemaChanges ?? []).map((c) => ({
      object: c.object_name,
      column: c.column_name,
      change: c.change,
      from: c.from_type,
      to: c.to_type,
      values: c.value_count,
      reason: c.reason,
    })),
  })}\n`;
}

/** Each stream's windows, records, rows, rejects and failures in a run. */
function tallyRun(result: JobRunResult, notAttempted: ReadonlyMap<StreamName, number>): Map<string, StreamTally> {
  const byStream = new Map<string, StreamTally>();
  const of = (stream: string) =>
    byStream.get(stream) ??
    byStream
      .set(stream, {
        windows: 0,
        loaded: 0,
        rejected: 0,
        fields: 0,
        extracted: 0,
        empty: 0,
        failed: 0,
        notAttempted: 0,
      })
      .get(stream)!;
  for (const c of result.loaded) {
    const s = of(c.stream);
    s.windows++;
    s.loaded += c.loaded;
    s.rejected += c.rejected;
    s.fields += c.fieldsRejected ?? 0;
    s.extracted += c.extracted;
  }
  for (const [stream, empty] of result.empty) of(stream).empty += empty;
  for (const f of result.failed) {
    const s = of(f.stream);
    s.failed++;
    s.firstFailure ??= `${formatWindow(f.window)}: ${f.error}`;
  }
  for (const [stream, n] of notAttempted) of(stream).notAttempted += n;
  return byStream;
}

function streamLine(stream: string, s: StreamTally): string {
  const rows = loadedAs(stream);
  const fields =
    s.fields > 0 ? `, ${plural(s.fields, 'field')} loaded as NULL (unreadable; see _etl_field_rejects)` : '';
  const parts = [
    `${stream}: ${plural(s.windows, 'window')} read, ${count(s.extracted)} ${readAs(stream)} read, ${count(s.loaded)}${rows ? ` ${rows}` : ''} loaded, ${count(s.rejected)} rejected${fields}`,
  ];
  if (s.empty > 0) parts.push(`${plural(s.empty, 'window')} the source reports empty, recorded without reading them`);
  if (s.failed > 0) parts.push(`${plural(s.failed, 'window')} FAILED (first: ${s.firstFailure})`);
  if (s.notAttempted > 0) parts.push(`${plural(s.notAttempted, 'window')} not attempted, left for the next run`);
  return parts.join('; ');
}

/** The customer directory's sweep on a job's first run, in words. */
function directoryLine(result: JobRunResult): string | undefined {
  const { loaded, empty, from, through } = result.directory;
  if (loaded.length === 0 && empty === 0) return undefined;
  const read = loaded.reduce((n, c) => n + c.extracted, 0);
  const span = from && through ? ` from ${from} (source.history_start) through ${through}` : '';
  const emptyPart =
    empty > 0
      ? `; ${plural(empty, 'window')} held no account by the source's own count, so they were recorded done without reading them`
      : '';
  return (
    `customer directory, swept once so that every customer is known${span}: ` +
    `${plural(loaded.length, 'accounts window')} read (${plural(read, 'account version')})${emptyPart}`
  );
}

/** A member the spec does not list, said once: the run that first loaded it. */
export function newFieldLine(f: UnlistedField): string {
  return `new field ${f.field_path} on ${f.record_type} first seen ${f.first_seen_at} (run ${f.first_seen_run}): ${plural(f.records, 'record')}, kept in ${f.table_name}._unlisted`;
}

/** Changes shown one by one in a run's summary; the rest are counted. */
const CHANGES_SHOWN = 10;

/** What the run changed of the tables and views analysts read: a line saying so, then the changes themselves. */
export function schemaChangeLines(changes: readonly SchemaChangeRow[]): string[] {
  if (changes.length === 0) return [];
  const shown = [...changes].sort(byUrgency).slice(0, CHANGES_SHOWN);
  const more = changes.length - shown.length;
  return [
    `schema of what analysts read: ${plural(changes.length, 'change')} (see _etl_schema_changes)`,
    ...shown.map((c) => `  ${schemaChangeLine(c)}`),
    ...(more > 0 ? [`  and ${count(more)} more`] : []),
  ];
}

/** Throws the command's one-line failure when any window failed. */
export function failOnFailedWindows(result: JobRunResult): void {
  const first = result.failed[0];
  if (!first) return;
  const damaged = result.failed.find((f) => damageOf({ message: f.error }) !== undefined);
  if (damaged)
    throw new CommandError(
      `${damagedLine(damageOf({ message: damaged.error })!)}; ${result.failed.length} window(s) failed, first: ${damaged.stream} ${formatWindow(damaged.window)}`,
      ExitCode.damaged,
    );
  const byStream = Object.entries(failuresByStream(result))
    .map(([stream, n]) => `${stream} ${count(n)}`)
    .join(', ');
  throw new CommandError(
    `${result.failed.length} window(s) failed; first: ${first.stream} ${formatWindow(first.window)}: ${first.error}${first.repeated ? '; it failed with the same error in the run before: not transient, running again will not mend it' : ''} (failed by stream: ${byStream})`,
    ExitCode.windowsFailed,
  );
}
