import type { Destination } from '../load/destination.js';
import type { SchemaChangeRow } from '../state/schema-changes.js';
import type { UnlistedField } from '../state/unlisted-fields.js';
import type { Logger } from '../log/logger.js';
import type { Day } from '../plan/days.js';
import type { JobPlan, JobSettings, StreamName } from '../plan/job-plan.js';
import type { Window } from '../plan/windows.js';
import type { AnswerArchive } from '../source/archive/answer-archive.js';
import type { LoyaltyApi } from '../source/loyalty-api.js';
import type { Backfill } from '../state/backfills.js';
import type { WindowCounts } from '../state/ledger.js';
import type { CustomerTally, CustomersAskedListener } from './customer-tally.js';
import type { RunStop } from './run-stop.js';
import type { StagingBudget } from './staging-budget.js';
import type { UnansweredWindows } from './unanswered-windows.js';

/** A window that could not be loaded, and why. */
export interface WindowFailure {
  stream: StreamName;
  window: Window;
  error: string;
  /** The window's last failure, in an earlier run, was this same error: it is not passing by itself. */
  repeated?: boolean;
}

export interface JobRunResult {
  runId: string;
  /** Windows of the streams asked for that were loaded. */
  loaded: Array<WindowCounts & { stream: StreamName }>;
  /** The customer directory made complete before them: accounts windows loaded, and windows found empty. */
  directory: { loaded: WindowCounts[]; empty: number; from?: Day; through?: Day };
  /** Windows of the streams asked for that the source reported empty, recorded done without reading each. */
  empty: Map<StreamName, number>;
  failed: WindowFailure[];
  requests: number;
  /** Requests tried again (429, 5xx, time-outs, dropped connections). */
  retries: number;
  /** Members the spec does not list that this run loaded first (`_etl_unlisted_fields`), read when the run ends. */
  newFields: UnlistedField[];
  /** The changes of what analysts read the run made (`_etl_schema_changes`). */
  schemaChanges?: SchemaChangeRow[];
  /** A replay's: the spans read from the archive and loaded again, and the kept webhook events that could not be. */
  replayed?: { spans: number; eventsFailed: string[] };
}

/**
 * What a run loads: windows planned by the command (`run`, the demo), a backfill whose windows are claimed
 * from the warehouse and shared with any other worker of the same backfill, or the spans of a range the raw
 * archive kept (`replay`), with no request to the service.
 */
export type JobWork =
  | { kind: 'planned'; windows: Map<StreamName, Window[]> }
  | { kind: 'backfill'; backfill: Backfill }
  | { kind: 'replay'; replay: ArchiveReplay };

/** What a replay loads again from the raw archive (`replay-spans.ts`). */
export interface ArchiveReplay {
  archive: AnswerArchive;
  from: Day;
  to: Day;
  streams: StreamName[];
  /** Only the windows holding rejected records (`replay --rejects`): after a fix, they load again from what was kept. */
  windows?: (stream: StreamName) => Promise<Set<Day>>;
  /** With `windows`: whether reference data holds fields loaded as NULL, so that the newest kept profiles load again. */
  profilesRejected?: () => Promise<boolean>;
  /**
   * Writes the kept webhook events of the range again (`loyalty_events`), first, as a run ingests its spool
   * first; returns what could not be replayed, one line each.
   */
  events?: (runId: string) => Promise<string[]>;
}

export interface JobRunRequest {
  /** The job, resolved from `jobs.yaml` and the environment. */
  plan: JobPlan;
  /** `run` or `backfill …`, as recorded in `_etl_runs`. */
  command: string;
  work: JobWork;
  /** Spans loaded at once, at most (a stream may take fewer: its `lanes`). Streams run in `STREAM_ORDER`; spans of a stream run in parallel. */
  concurrency: number;
  api: LoyaltyApi;
  destination: Destination;
  /** Where every answer a span gets is kept before the span commits (none: answers are not archived). */
  archive?: AnswerArchive;
  logger: Logger;
  /** The run's id (default: a new UUID). */
  runId?: string;
  /** Hold the job's run lock (`run:<job>` in `_etl_locks`) for the whole run: a second one gets JobBusyError. */
  exclusive?: boolean;
  /** Refresh `profiles` and `profile_fields` first (default true). */
  refreshReferenceData?: boolean;
  /** Called after every span, and after a stretch of windows the source reports empty, for progress display. */
  onSpanDone?: (stream: StreamName, counts: WindowCounts[]) => void;
  /**
   * Called while per-customer spans run, for progress display: the customers a stream's spans under way selected
   * and have handed on to be asked so far (its lanes summed), then `undefined` once none of its spans is under way.
   */
  onCustomersAsked?: CustomersAskedListener;
  /** Called once the run's work is over, just before its end is recorded and logged: a progress display's last line goes before the run's. */
  onWorkDone?: () => void;
  /** Stops the run early (an interruption); the run also stops by itself when the source refuses the credentials. */
  stop?: RunStop;
}

/**
 * What the stages of a run share once its start is recorded (`runJob`): what it was asked, its id, the result
 * they add to, what stops it, its log.
 */
export interface RunUnderWay {
  readonly request: JobRunRequest;
  readonly runId: string;
  /** The job's name (`request.plan.name`) and settings (`request.plan.job`). */
  readonly job: string;
  readonly jobConfig: JobSettings;
  readonly result: JobRunResult;
  readonly stop: RunStop;
  readonly log: Logger;
  /** The customers the per-customer spans under way ask, for `onCustomersAsked`. */
  readonly customers: CustomerTally;
  /** The limit on staged rows its spans in flight share, when the warehouse holds them in this process. */
  readonly staging?: StagingBudget;
  /** The windows in a row the source gave no answer to: enough of them stop the run. */
  readonly unanswered: UnansweredWindows;
  /** When the run last looked for dead holders of the windows it waits on (ms; see `lanes.ts`). */
  lastReap: number;
}
