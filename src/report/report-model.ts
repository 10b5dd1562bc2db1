import type { Day } from '../plan/days.js';
import type { JobStatus, StreamStatus } from '../state/status-report.js';

/** What a window of the grid is: loaded, failed, planned by a backfill and not loaded yet, or never loaded at all. */
export type WindowStatus = 'done' | 'failed' | 'pending' | 'missing';

/** One window of a stream, as `_etl_windows` records it (a `missing` window has no row there). */
export interface ReportWindow {
  start: Day;
  end: Day;
  status: WindowStatus;
  extracted: number;
  loaded: number;
  rejected: number;
  requests: number;
  /** When its last load attempt ended (ISO text), or null. */
  finishedAt: string | null;
  runId: string | null;
  /** Why its last load failed. */
  error: string | null;
}

/** A stream: what `status` shows, and every window of its grid. */
export interface StreamReport extends StreamStatus {
  /**
   * Every window from the job's first day (or an earlier recorded window) through the report's last day, and
   * any recorded after it, oldest first; windows of the job's grid that no recorded window covers are `missing`.
   */
  windows: ReportWindow[];
  /** Missing windows before the last one the ledger records (loaded, failed or pending): holes in its history. */
  gaps: number;
}

/** Rejected records of one stream, for one source day (the window they were read in). */
export interface RejectDay {
  day: Day;
  stream: string;
  count: number;
}

/** A reason records are rejected for, with the latest record rejected for it. */
export interface RejectReason {
  stream: string;
  /** The error with its quoted values blanked (`birthdate: not a date YYYY-MM-DD: "…"`), so alike errors group. */
  reason: string;
  count: number;
  example: { error: string; payload: string; windowStart: Day };
}

/** A warehouse table and its rows. */
export interface TableSize {
  table: string;
  rows: number;
}

/** Everything the status page shows, read from the warehouse alone. */
export interface ReportModel extends Omit<JobStatus, 'streams'> {
  /** When the page was made (ISO UTC). */
  generatedAt: string;
  /** The warehouse, without credentials. */
  warehouse: string;
  /** IANA zone of the window days. */
  timezone: string;
  windowDays: number;
  firstDay: Day;
  rejectThreshold: number;
  streams: StreamReport[];
  rejectDays: RejectDay[];
  /** The most frequent reasons, most frequent first. */
  rejectReasons: RejectReason[];
  tables: TableSize[];
}
