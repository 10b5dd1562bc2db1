import type { Destination } from '../load/destination.js';
import type { Day } from '../plan/days.js';
import { addDays } from '../plan/days.js';
import type { Window } from '../plan/windows.js';
import { advanceWatermark, ensureWindowRows, recordWindowsDone } from '../state/ledger.js';
import { claimWindows } from '../state/window-claims.js';

/** Stretches shorter than this are read window by window: a count would save too little to pay for itself. */
const MIN_STRETCH = 8;
/**
 * Stretches this long are always halved and each half counted: a count says how many records, not where they
 * are, and years of empty history followed by busy years hold more records than windows. Below it, a stretch is
 * halved only while it holds fewer records than windows (some of it must then be empty). On a stretch busy
 * throughout, this costs about two counts per this many windows.
 */
const ALWAYS_HALVE = 64;
/** Windows recorded per ledger transaction. */
const RECORD_BATCH = 500;

export interface EmptyStretchRequest {
  job: string;
  stream: string;
  runId: string;
  firstDay: Day;
  /** Windows never loaded, in order; consecutive ones form stretches. */
  windows: Window[];
  /** The source's count of records over a range of days (one request). */
  count(range: Window): Promise<number>;
  destination: Destination;
}

export interface EmptyStretchResult {
  /** Windows still to be read one by one. */
  toLoad: Window[];
  /** Windows recorded done with no records, without a request of their own. */
  empty: number;
  /** Counting requests made. */
  requests: number;
}

/**
 * Finds the stretches of never-loaded windows the source reports empty and records them done at once, so years
 * of empty history cost a few requests instead of one per window. A stretch is counted as a whole; counted 0, all
 * its windows are done; long, or holding fewer records than windows, each half is counted in turn; otherwise it
 * is read window by window. Windows another live run holds are left to be read.
 */
export async function skipEmptyStretches(request: EmptyStretchRequest): Promise<EmptyStretchResult> {
  const result: EmptyStretchResult = { toLoad: [], empty: 0, requests: 0 };
  const empty: Window[] = [];
  const visit = async (stretch: Window[]): Promise<void> => {
    if (stretch.length < MIN_STRETCH) {
      result.toLoad.push(...stretch);
      return;
    }
    const n = await request.count({ start: stretch[0]!.start, end: stretch.at(-1)!.end });
    result.requests++;
    if (n === 0) empty.push(...stretch);
    else if (n >= stretch.length && stretch.length < ALWAYS_HALVE) result.toLoad.push(...stretch);
    else {
      const half = Math.ceil(stretch.length / 2);
      await visit(stretch.slice(0, half));
      await visit(stretch.slice(half));
    }
  };
  for (const stretch of consecutive(request.windows)) await visit(stretch);
  for (let i = 0; i < empty.length; i += RECORD_BATCH) {
    const batch = empty.slice(i, i + RECORD_BATCH);
    if (await recordEmpty(request, batch)) result.empty += batch.length;
    else result.toLoad.push(...batch);
  }
  result.toLoad.sort((a, b) => (a.start < b.start ? -1 : 1));
  return result;
}

/** Claims `windows` and records them done with no records, in one transaction; false when another run holds one. */
function recordEmpty(request: EmptyStretchRequest, windows: Window[]): Promise<boolean> {
  const { destination, job, stream, runId } = request;
  return destination.ledgerTransaction(async (conn) => {
    await ensureWindowRows(conn, job, stream, windows, runId);
    if (!(await claimWindows(conn, destination.capabilities, { job, stream, runId }, windows))) return false;
    const now = new Date().toISOString();
    const counts = windows.map((window) => ({ window, extracted: 0, loaded: 0, rejected: 0, requests: 0 }));
    await recordWindowsDone(conn, job, stream, runId, now, counts);
    await advanceWatermark(conn, job, stream, request.firstDay, runId, now);
    return true;
  });
}

/** Splits ordered windows into runs of consecutive ones. */
function consecutive(windows: Window[]): Window[][] {
  const runs: Window[][] = [];
  for (const w of windows) {
    const last = runs.at(-1);
    if (last && addDays(last.at(-1)!.end, 1) === w.start) last.push(w);
    else runs.push([w]);
  }
  return runs;
}
