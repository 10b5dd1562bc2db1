import type { Day } from '../plan/days.js';
import type { StreamName } from '../plan/job-plan.js';
import { redact } from '../log/redact.js';
import { formatWindow, type Window } from '../plan/windows.js';
import { recordWindowFailed, type WindowCounts } from '../state/ledger.js';
import type { StreamContext, StreamDefinition } from '../streams/stream.js';
import type { RunUnderWay, WindowFailure } from './job-run-request.js';
import { loadSpan, type SpanSettings } from './load-span.js';
import { ClaimLostError } from '../state/state-errors.js';
import { SpanPartlyLoadedError } from './pipeline-errors.js';

/**
 * Where a span's windows count: the backfill they are loaded for, or the customer directory (neither progress nor
 * `loaded`); and `through`, the last day the run planned for the stream (a first night left to the sweep asks the
 * sweep's quota in the span that reaches it).
 */
export type SpanTarget = { backfillId?: string; directory?: boolean; through?: Day | undefined };

/**
 * Loads a span the run holds ({@link loadSpan}) with the run's settings and its own scoped client; what it loaded
 * goes to the run's result, and a failure is recorded on its windows while the run goes on.
 */
export async function loadClaimedSpan(
  run: RunUnderWay,
  name: StreamName,
  stream: StreamDefinition,
  span: Window[],
  target: SpanTarget,
): Promise<void> {
  const { request, job, jobConfig, runId, result } = run;
  const done = (counts: WindowCounts[]) => {
    if (target.directory) return void result.directory.loaded.push(...counts);
    result.loaded.push(...counts.map((c) => ({ ...c, stream: name })));
    request.onSpanDone?.(name, counts);
  };
  const api = request.api.scoped();
  const letGo = run.stop.callsOff(api);
  const { plan } = request;
  const ctx: StreamContext = {
    api,
    pageSize: plan.pageSize,
    concurrency: plan.sourceConcurrency,
    timezone: plan.timezone,
    job,
    jobConfig,
    logger: run.log,
    choiceLists: plan.multipleChoice,
  };
  const customers = stream.customerRule?.(jobConfig);
  // only a span that asks customers, and only when someone follows the run's progress
  const asked = customers && request.onCustomersAsked ? run.customers.open(name) : undefined;
  const settings: SpanSettings = {
    job,
    runId,
    firstDay: jobConfig.first_day,
    rejectThreshold: jobConfig.reject_threshold,
    claimedBy: runId,
    backfillId: target.backfillId,
    customers,
    runThrough: target.through,
    customersAsked: asked?.report,
    archive: request.archive,
    schemaContract: plan.schemaContract,
    staging: run.staging,
  };
  try {
    done(await loadSpan(stream, span, ctx, request.destination, settings, run.log));
    run.unanswered.answered();
  } catch (caught) {
    // the windows read before the failure were committed: they count as loaded
    if (caught instanceof SpanPartlyLoadedError) done(caught.loaded);
    const [error, failed] = caught instanceof SpanPartlyLoadedError ? [caught.cause, caught.failed] : [caught, span];
    // the run stops: the span's windows are left as they were, for the next run
    if (!run.stop.absorbs(error)) {
      await recordFailure(run, name, failed, error);
      run.unanswered.failed(error);
    }
  } finally {
    asked?.close();
    letGo();
    result.requests += api.counter.requests;
  }
}

async function recordFailure(run: RunUnderWay, name: StreamName, windows: Window[], error: unknown): Promise<void> {
  const message = redact(error instanceof Error ? error.message : String(error));
  run.log.error(
    { stream: name, window: formatWindow({ start: windows[0]!.start, end: windows.at(-1)!.end }), err: error },
    'window failed',
  );
  for (const window of windows) {
    const failure: WindowFailure = { stream: name, window, error: message };
    run.result.failed.push(failure);
    // a window taken over by another worker is that worker's to record
    if (error instanceof ClaimLostError) continue;
    await run.request.destination
      .withConnection(async (conn) => {
        const { repeated } = await recordWindowFailed(
          conn,
          run.job,
          name,
          window,
          run.runId,
          new Date().toISOString(),
          message,
        );
        if (repeated) failure.repeated = true;
      })
      .catch((e: unknown) => {
        // The window stays claimed by this live run, so its queue would wait for it for ever: the run stops
        // instead (its claims fall free when it is recorded as ended, or when its lease runs out).
        run.log.error({ err: e }, 'could not record the failed window');
        throw e;
      });
  }
}
