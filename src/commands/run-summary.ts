import { CommandError, ExitCode } from './exit-codes.js';
import type { JobRunResult } from '../pipeline/job-run-request.js';
import type { UnlistedField } from '../state/unlisted-fields.js';
import { byUrgency, schemaChangeLine, type SchemaChangeRow } from '../state/schema-changes.js';
import { formatWindow } from '../plan/windows.js';
import { formatDuration } from '../report/format.js';
import { count, plural } from './counts.js';
import { loadedAs, readAs } from './stream-units.js';

/**
 * One line per stream of what a run loaded, for stdout; every count says what it counts. The last line: the
 * requests the run made, and how long it took when `seconds` is given.
 */
export function summarizeRun(result: JobRunResult, seconds?: number): string {
  const byStream = new Map<
    string,
    { windows: number; loaded: number; rejected: number; fields: number; extracted: number; empty: number }
  >();
  const of = (stream: string) =>
    byStream.get(stream) ??
    byStream.set(stream, { windows: 0, loaded: 0, rejected: 0, fields: 0, extracted: 0, empty: 0 }).get(stream)!;
  for (const c of result.loaded) {
    const s = of(c.stream);
    s.windows++;
    s.loaded += c.loaded;
    s.rejected += c.rejected;
    s.fields += c.fieldsRejected ?? 0;
    s.extracted += c.extracted;
  }
  for (const [stream, empty] of result.empty) of(stream).empty += empty;
  const lines = [...byStream].map(([stream, s]) => {
    const rows = loadedAs(stream);
    const fields =
      s.fields > 0 ? `, ${plural(s.fields, 'field')} loaded as NULL (unreadable; see _etl_field_rejects)` : '';
    const read = `${stream}: ${plural(s.windows, 'window')} read, ${count(s.extracted)} ${readAs(stream)} read, ${count(s.loaded)}${rows ? ` ${rows}` : ''} loaded, ${count(s.rejected)} rejected${fields}`;
    return s.empty > 0
      ? `${read}; ${plural(s.empty, 'window')} the source reports empty, recorded without reading them`
      : read;
  });
  const directory = result.directory;
  if (directory.loaded.length > 0 || directory.empty > 0) {
    const read = directory.loaded.reduce((n, c) => n + c.extracted, 0);
    lines.unshift(
      `customer directory before the job's first day: ${plural(directory.loaded.length, 'accounts window')} read (${count(read)} account versions), ${plural(directory.empty, 'window')} the source reports empty, recorded without reading them`,
    );
  }
  if (lines.length === 0 && result.failed.length === 0) lines.push('nothing to load: every window is up to date');
  for (const f of result.newFields) lines.push(newFieldLine(f));
  lines.push(...schemaChangeLines(result.schemaChanges ?? []));
  lines.push(
    `${count(result.requests)} source requests${seconds === undefined ? '' : ` in ${formatDuration(seconds)}`}, run ${result.runId}`,
  );
  return lines.join('\n');
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
  throw new CommandError(
    `${result.failed.length} window(s) failed; first: ${first.stream} ${formatWindow(first.window)}: ${first.error}`,
    ExitCode.windowsFailed,
  );
}
