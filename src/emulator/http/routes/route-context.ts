import type { ResolvedFaults } from '../../faults/fault-options.js';
import type { GroundTruth } from '../../ground-truth.js';
import type { ActivityOverlay } from '../../model/activity-overlay.js';
import type { SourceData } from '../../model/source-data.js';
import type { ExpiryNotifier } from '../../webhook/expiry-notifier.js';
import type { WebhookDispatcher } from '../../webhook/webhook-dispatcher.js';
import type { DataViewHook } from '../export-page-view.js';
import type { RequestStats } from '../request-stats.js';
import type { ReadingLayer } from '../../readings/reading-layer.js';

/** What route handlers serve from. */
export interface RouteContext {
  data: SourceData;
  truth: GroundTruth;
  stats: RequestStats;
  dataView: DataViewHook | null;
  /** What clients wrote, on top of `data`. */
  activity: ActivityOverlay;
  /** Calls the loyalty webhook's subscribers. */
  webhooks: WebhookDispatcher;
  /** The emulator's clock (ms): the time of every write, and the instant loyalty and vouchers are served as of. */
  now: () => number;
  /** Fires the loyalty webhook for points expired since the last check. */
  expiries: ExpiryNotifier;
  /** How the readings of the open conventions change what is served. */
  readings: ReadingLayer;
  /** The faults in force now (they can change while the emulator runs). */
  faults(): ResolvedFaults;
}
