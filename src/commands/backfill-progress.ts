import cliProgress from 'cli-progress';
import type { Logger } from '../log/logger.js';

/** How a backfill shows how far it has come. */
export interface BackfillProgress {
  /** Windows finished for the backfill (by any worker) and records this worker has read so far. */
  update(windowsDone: number, records: number): void;
  /** Draws or logs the last state and lets go of the terminal. */
  stop(): void;
}

export interface ProgressOptions {
  /** Windows of the backfill, and those already done when this worker started (a resume, other workers). */
  total: number;
  done: number;
  /** Where a bar is drawn: stderr. A bar only when it is a terminal; JSON log lines otherwise. */
  stream: NodeJS.WritableStream & { isTTY?: boolean };
  logger: Logger;
  /** Least time between two progress log lines (default 5 s). */
  logEveryMs?: number;
  now?: () => number;
}

/** Windows per second and seconds left, from what this worker has seen since it started. */
function pace(startedAt: number, now: number, startDone: number, done: number, total: number): { rate: number; etaSeconds: number | null } {
  const seconds = (now - startedAt) / 1000;
  const rate = seconds > 0 ? (done - startDone) / seconds : 0;
  return { rate, etaSeconds: rate > 0 ? Math.round((total - done) / rate) : null };
}

/**
 * A progress bar on a terminal — windows, records, rate and ETA — or, when stderr is not a terminal (a
 * scheduler, a pipe), a `backfill progress` JSON log line every few seconds with the same numbers.
 *
 * @example
 * const progress = createProgress({ total: 730, done: 0, stream: process.stderr, logger });
 * progress.update(12, 4_000);
 * progress.stop();
 */
export function createProgress(options: ProgressOptions): BackfillProgress {
  const now = options.now ?? Date.now;
  const startedAt = now();
  const startDone = options.done;
  let done = options.done;
  let records = 0;
  if (options.stream.isTTY) {
    const bar = new cliProgress.SingleBar(
      {
        stream: options.stream as NodeJS.WritableStream,
        format: 'backfill [{bar}] {value}/{total} windows | {records} records | {rate} windows/s | ETA {eta_formatted}',
        hideCursor: true,
        etaBuffer: 50,
        fps: 5,
      },
      cliProgress.Presets.shades_classic,
    );
    bar.start(options.total, done, { records: 0, rate: '0.0' });
    return {
      update(windowsDone, recordsRead) {
        done = windowsDone;
        records = recordsRead;
        bar.update(done, { records, rate: pace(startedAt, now(), startDone, done, options.total).rate.toFixed(1) });
      },
      stop() {
        bar.update(done, { records, rate: pace(startedAt, now(), startDone, done, options.total).rate.toFixed(1) });
        bar.stop();
      },
    };
  }
  const every = options.logEveryMs ?? 5000;
  let lastLog = startedAt;
  const log = () => {
    lastLog = now();
    const { rate, etaSeconds } = pace(startedAt, lastLog, startDone, done, options.total);
    options.logger.info(
      { windowsDone: done, windowsTotal: options.total, records, windowsPerSecond: Math.round(rate * 100) / 100, etaSeconds },
      'backfill progress',
    );
  };
  return {
    update(windowsDone, recordsRead) {
      done = windowsDone;
      records = recordsRead;
      if (now() - lastLog >= every) log();
    },
    stop: log,
  };
}
