import { type EmulatorOptions, type ResolvedEmulatorOptions, resolveEmulatorOptions } from './emulator-options.js';
import { type GroundTruth, groundTruthOf } from './ground-truth.js';
import { FaultLayer, type FaultCounts } from './faults/fault-layer.js';
import { type FaultOptions, resolveFaults } from './faults/fault-options.js';
import type { DataViewHook } from './http/export-page-view.js';
import { listen } from './http/http-server.js';
import { type Middleware, type RequestHandler, composePipeline } from './http/request-pipeline.js';
import { RequestStats } from './http/request-stats.js';
import { requireAuth } from './http/require-auth.js';
import { createRouter } from './http/router.js';
import { customerRoutes } from './http/routes/customer-routes.js';
import { exportRoutes } from './http/routes/export-routes.js';
import { postingRoutes } from './http/routes/posting-routes.js';
import type { RouteContext } from './http/routes/route-context.js';
import { setupRoutes } from './http/routes/setup-routes.js';
import { truthRoutes } from './http/routes/truth-routes.js';
import { writeRoutes } from './http/routes/write-routes.js';
import { activityRoutes } from './http/routes/activity-routes.js';
import { ActivityOverlay } from './model/activity-overlay.js';
import { SourceData } from './model/source-data.js';
import { ReadingLayer } from './readings/reading-layer.js';
import { ExpiryNotifier } from './webhook/expiry-notifier.js';
import { WebhookDispatcher, type WebhookOptions, type WebhookStats } from './webhook/webhook-dispatcher.js';

/** Seams for behaviour layered on top of the faithful source (faults, drift). */
export interface EmulatorHooks {
  /** Run after request counting and auth, before the routes; first = outermost. */
  middleware?: readonly Middleware[];
  /** Replaces the view of a listing (export window, a customer's postings) per request, after drift. */
  dataView?: DataViewHook;
}

/** Options of {@link startEmulator}: the dataset, where to listen, and optional hooks. */
export interface StartEmulatorOptions extends EmulatorOptions {
  /** Port to listen on; 0 (default) picks a free one. */
  port?: number;
  /** Interface to bind. Default `127.0.0.1`. */
  host?: string;
  hooks?: EmulatorHooks;
  /**
   * The emulator's clock in ms: the time written activity is booked at, and the instant the loyalty lookup,
   * the vouchers and the loyalty ground truth answer as of. Default `Date.now`.
   */
  clock?: () => number;
  /**
   * How often (ms) to fire the loyalty webhook for points that expired since the last check
   * ({@link EmulatorActivity.checkExpiries}). Default: never by itself; tests moving an injected clock call
   * `checkExpiries()`, and `loyalty-etl emulator` checks every minute.
   */
  expiryCheckMs?: number;
  /** Subscribers of the loyalty webhook and how calls to them are retried. */
  webhooks?: WebhookOptions;
}

/** What clients wrote, and the loyalty webhook. */
export interface EmulatorActivity {
  /** Registers a loyalty webhook subscriber (also `POST /_emulator/webhooks` with `{"url": …}`). */
  subscribe(url: string): void;
  unsubscribe(url: string): void;
  subscribers(): string[];
  /** Resolves once every webhook call made so far has been delivered or given up. */
  settled(): Promise<void>;
  /** Webhook calls delivered, given up, attempted and pending. */
  webhookStats(): WebhookStats;
  /**
   * Fires `LOYALTY_POINT_UPDATED` (`origin.source` `EXPIRY`) once per customer and expiry instant passed
   * between the previous check (at first: the start) and the clock now, where points were left to expire;
   * resolves with the number of events queued (`settled()` waits for their delivery). Also
   * `POST /_emulator/expiries`.
   *
   * @example
   * now = Date.parse('2024-12-01T00:00:00+02:00'); // the injected clock passes the end of November
   * await emulator.activity.checkExpiries();
   * await emulator.activity.settled();
   */
  checkExpiries(): Promise<number>;
}

/** A running emulator. */
export interface Emulator {
  /** Base URL without a trailing slash, e.g. `http://127.0.0.1:40123`. */
  url: string;
  port: number;
  options: ResolvedEmulatorOptions;
  /** What a correct warehouse must hold. */
  truth: GroundTruth;
  /** What clients wrote, and the loyalty webhook. */
  activity: EmulatorActivity;
  /** Requests served so far. */
  stats: {
    /** Requests whose path starts with `pathPrefix` (all when omitted). */
    requests(pathPrefix?: string): number;
    reset(): void;
  };
  /** The injected faults: what they did, and a way to change them while the emulator runs. */
  faults: {
    /** What was injected since the faults were last set. */
    counts(): FaultCounts;
    /**
     * Replaces every fault from the next request on (omitted ones are off); the seed defaults to the
     * dataset's. E.g. `set({ downAfter: 0 })` takes the source down, `set({})` brings it back.
     */
    set(faults: FaultOptions): void;
  };
  /** Stops listening and drops open connections. */
  close(): Promise<void>;
}

/**
 * The request handler of an emulator without a socket: counting, auth, faults, hooks, then the routes.
 * Useful to embed the emulator in another server; `writes` holds what clients write (give `truth` the same
 * overlay, see {@link groundTruthOf}).
 */
export function createEmulatorHandler(
  data: SourceData,
  stats: RequestStats,
  truth: GroundTruth,
  hooks: EmulatorHooks = {},
  writes: { activity: ActivityOverlay; webhooks: WebhookDispatcher; now: () => number; expiries?: ExpiryNotifier } = {
    activity: new ActivityOverlay(data),
    webhooks: new WebhookDispatcher(),
    now: Date.now,
  },
  faults: FaultLayer = new FaultLayer(data.options.faults),
): RequestHandler {
  const expiries = writes.expiries ?? new ExpiryNotifier(writes.activity, writes.webhooks, writes.now);
  const userView = hooks.dataView;
  const dataView: DataViewHook = userView
    ? (view, context) => userView(faults.dataView(view, context), context)
    : faults.dataView;
  const readings = new ReadingLayer(data.options.readings, data.calendar.clock, data.options.seed);
  const context: RouteContext = {
    data,
    truth,
    stats,
    dataView,
    faults: () => faults.faults,
    readings,
    ...writes,
    expiries,
  };
  const router = createRouter(
    [
      ...exportRoutes(context),
      ...postingRoutes(context),
      ...customerRoutes(context),
      ...setupRoutes(context),
      ...writeRoutes(context),
      ...truthRoutes(context),
      ...activityRoutes(context),
    ],
    (error) => readings.errorResponse(error),
  );
  const auth = data.options.auth;
  return composePipeline(
    [
      stats.middleware(),
      ...(auth ? [requireAuth(auth, (error) => readings.errorResponse(error))] : []),
      faults.middleware,
      ...(hooks.middleware ?? []),
    ],
    router,
  );
}

/**
 * Builds the dataset and serves it over HTTP.
 *
 * @example
 * const emulator = await startEmulator({ accounts: 1000, endDate: '2024-06-30' });
 * await fetch(`${emulator.url}/business-data/accounts?start=2024-06-01&end=2024-06-30&page=1&size=100`);
 * await emulator.close();
 */
export async function startEmulator(options: StartEmulatorOptions = {}): Promise<Emulator> {
  const {
    port = 0,
    host = '127.0.0.1',
    hooks,
    clock = Date.now,
    webhooks: webhookOptions,
    expiryCheckMs,
    ...dataset
  } = options;
  if (expiryCheckMs !== undefined && !(expiryCheckMs >= 1)) throw new RangeError('expiryCheckMs must be at least 1');
  const data = new SourceData(resolveEmulatorOptions(dataset));
  const activity = new ActivityOverlay(data);
  const webhooks = new WebhookDispatcher(webhookOptions);
  const truth = groundTruthOf(data, activity, clock);
  const expiries = new ExpiryNotifier(activity, webhooks, clock);
  const stats = new RequestStats();
  const faults = new FaultLayer(data.options.faults);
  const server = await listen(
    createEmulatorHandler(data, stats, truth, hooks, { activity, webhooks, now: clock, expiries }, faults),
    host,
    port,
  );
  const expiryTimer = expiryCheckMs === undefined ? null : setInterval(() => void expiries.check(), expiryCheckMs);
  expiryTimer?.unref();
  const urlHost = host.includes(':') ? `[${host}]` : host;
  return {
    url: `http://${urlHost}:${server.port}`,
    port: server.port,
    options: data.options,
    truth,
    activity: {
      subscribe: (url) => webhooks.subscribe(url),
      unsubscribe: (url) => webhooks.unsubscribe(url),
      subscribers: () => webhooks.subscribers(),
      settled: () => webhooks.settled(),
      webhookStats: () => webhooks.stats(),
      checkExpiries: () => expiries.check(),
    },
    stats: { requests: (prefix) => stats.requests(prefix), reset: () => stats.reset() },
    faults: { counts: () => faults.counts, set: (options) => faults.set(resolveFaults(options, data.options.seed)) },
    close: () => {
      if (expiryTimer) clearInterval(expiryTimer);
      webhooks.close();
      return server.close();
    },
  };
}
