import type { SpanLoad } from '../load/destination.js';
import type { Logger } from '../log/logger.js';
import { formatWindow, type Window } from '../plan/windows.js';
import type { StreamContext, StreamDefinition } from '../streams/stream.js';
import type { StagedSpan } from './stage-span.js';
import { RejectThresholdError, UnreadRecordsError } from './pipeline-errors.js';

/** Windows with fewer rejects than this never fail on the threshold: one bad record in a tiny window is noise. */
export const MIN_REJECTS_TO_FAIL = 10;

/**
 * A window fails when more than `threshold` of its records were rejected (and at least `MIN_REJECTS_TO_FAIL`),
 * or when every record it read was rejected, whatever their number: a window of rejects alone says the service
 * shapes or names something otherwise than the pipeline reads it, not that one record was bad. The rejects of the
 * windows that fail still go to `_etl_rejects` (in place of those of an earlier reading of the windows), where the
 * failure line sends the operator; nothing else of theirs is loaded.
 */
export async function checkRejects(
  stream: StreamDefinition,
  windows: Window[],
  staged: StagedSpan,
  threshold: number,
  load: SpanLoad,
  logger: Logger,
): Promise<void> {
  const failing: Array<{ window: Window; message: string }> = [];
  for (const window of windows) {
    const bad = staged.rejected.get(window.start) ?? 0;
    const total = staged.extracted.get(window.start) ?? 0;
    if (total > 0 && bad === total)
      failing.push({
        window,
        message:
          `${stream.name} ${formatWindow(window)}: all ${total} records rejected (the first: ${staged.firstReject.get(window.start) ?? 'no reason'}); ` +
          'see _etl_rejects: the service may name or shape a field otherwise than the pipeline reads it',
      });
    else if (bad >= MIN_REJECTS_TO_FAIL && bad > total * threshold)
      failing.push({
        window,
        message: `${stream.name} ${formatWindow(window)}: ${bad} of ${total} records rejected, more than the threshold of ${threshold * 100}%; see _etl_rejects`,
      });
  }
  if (failing.length === 0) return;
  await load
    .keepRejects(failing.map((f) => f.window.start))
    .catch((error: unknown) =>
      logger.warn({ stream: stream.name, err: error }, 'could not keep the rejects of the windows that failed on them'),
    );
  throw new RejectThresholdError(failing[0]!.message);
}

/**
 * A span of a listing filtered by date that read no record at all is asked for its count as a whole (one request):
 * a source that counts records in those days while its windows list none reads the range otherwise than the
 * pipeline asks it (most often an export that leaves out its `end` day), and recording the windows done would
 * lose those records for good.
 */
export async function checkNothingUnread(
  stream: StreamDefinition,
  span: Window[],
  staged: StagedSpan,
  ctx: StreamContext,
): Promise<void> {
  if (!stream.countRange) return;
  for (const window of span) if ((staged.extracted.get(window.start) ?? 0) > 0) return;
  const range = { start: span[0]!.start, end: span.at(-1)!.end };
  const counted = await stream.countRange(ctx.api, range);
  if (counted === 0) return;
  throw new UnreadRecordsError(
    `${stream.name} ${formatWindow(range)}: the source counts ${counted} records in these days, but reading its windows found none; ` +
      'if the export leaves out its end day, set source.export_end: exclusive in jobs.yaml',
  );
}
