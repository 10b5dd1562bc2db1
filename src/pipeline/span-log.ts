import type { Logger } from '../log/logger.js';
import { formatWindow } from '../plan/windows.js';
import type { CustomerSelection } from '../state/customer-selection.js';
import type { WindowCounts } from '../state/ledger.js';
import type { UnlistedSighting } from '../state/unlisted-fields.js';
import type { StreamDefinition } from '../streams/stream.js';

/** One line per window the span loaded, with what it read, loaded and rejected. */
export function logLoaded(
  stream: StreamDefinition,
  counts: WindowCounts[],
  started: number,
  logger: Logger,
  selection: CustomerSelection | undefined,
): void {
  const events = selection?.events
    ? { eventsAfter: selection.events.after ?? null, eventsThrough: selection.events.through }
    : {};
  for (const c of counts) {
    logger.debug(
      {
        stream: stream.name,
        window: formatWindow(c.window),
        ...(selection ? { selection: selection.kind, ...events } : {}),
        extracted: c.extracted,
        loaded: c.loaded,
        rejected: c.rejected,
        requests: c.requests,
        ms: Math.round(performance.now() - started),
      },
      'window loaded',
    );
  }
}

/** Says once, when the commit that first loaded it is done, each member the spec does not list. */
export function logNewFields(
  stream: StreamDefinition,
  fresh: readonly UnlistedSighting[],
  runId: string,
  logger: Logger,
): void {
  for (const f of fresh) {
    logger.warn(
      { stream: stream.name, recordType: f.recordType, field: f.path, table: f.table, records: f.records, runId },
      `new field ${f.path} on ${f.recordType} first seen in run ${runId} (kept in ${f.table}._unlisted)`,
    );
  }
}
