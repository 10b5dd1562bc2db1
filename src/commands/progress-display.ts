import cliProgress from 'cli-progress';
import type { Logger } from '../log/logger.js';
import type { CustomersAsked } from '../pipeline/customer-tally.js';
import { count } from './counts.js';
import { logFormat } from './job-session.js';

/** How a run or a backfill shows how far it has come. */
export interface ProgressDisplay {
  /** Windows finished (by any worker, for a shared backfill) and records this worker has read so far. */
  update(windowsDone: number, records: number): void;
  /** How far a per-customer stream's spans under way have come; `undefined` once none is under way. */
  customers(stream: string, asked: CustomersAsked | undefined): void;
  /** Draws or logs the last state and lets go of the terminal; once (a second call does nothing). */
  stop(): void;
}

export interface ProgressOptions {
  /** What is under way: `run`, `backfill`; it names the bar and the progress log lines. */
  label: string;
  /** Windows of the work, and those already done when this worker started (a resume, other workers). */
  total: number;
  done: number;
  /** Where a bar is drawn: stderr. */
  stream: NodeJS.WritableStream;
  /** A bar (a person at a terminal reads human logs), or JSON progress lines through `logger` every few seconds. */
  bar: boolean;
  logger: Logger;
  /** Least time between two progress log lines (default 5 s). */
  logEveryMs?: number;
  now?: () => number;
}

/** A bar is drawn where a person reads the logs: stderr is a terminal and the logs are human lines. */
export function showsProgressBar(stream: { isTTY?: boolean } = process.stderr): boolean {
  return stream.isTTY === true && logFormat() === 'pretty';
}

/** Windows per second and seconds left, from what this worker has done since it started; no rate before a window is. */
export function pace(
  startedAt: number,
  now: number,
  startDone: number,
  done: number,
  total: number,
): { rate: number; etaSeconds: number | null } {
  const seconds = (now - startedAt) / 1000;
  const rate = seconds > 0 ? (done - startDone) / seconds : 0;
  return { rate, etaSeconds: rate > 0 ? Math.round((total - done) / rate) : null };
}

/** `42s`, `3m 05s`, `2h 10m`: the time left, or `estimating` while there is no rate to tell it from. */
export function formatEta(seconds: number | null): string {
  if (seconds === null) return 'estimating';
  if (seconds < 60) return `${seconds}s`;
  if (seconds < 3600) return `${Math.floor(seconds / 60)}m ${String(seconds % 60).padStart(2, '0')}s`;
  return `${Math.floor(seconds / 3600)}h ${String(Math.floor((seconds % 3600) / 60)).padStart(2, '0')}m`;
}

/** Where a per-customer stream is: its customers asked, of those its spans under way selected, and the time they have left. */
export interface StreamCustomers {
  stream: string;
  asked: number;
  selected: number;
  /** Seconds until the spans under way have asked every customer they selected; null before one has been asked. */
  etaSeconds: number | null;
}

/**
 * The per-customer streams under way, as the progress display shows them. The time left of a stream comes from
 * the customers it asked per second since its spans were first seen and the customers they have left: a span's
 * windows are done only at its end, so windows per second cannot tell it.
 */
export class CustomersProgress {
  private readonly streams = new Map<string, CustomersAsked & { since: number; askedAtStart: number }>();

  constructor(private readonly now: () => number) {}

  /** What the pipeline told of `stream`; `undefined` once none of its spans is under way. */
  set(stream: string, asked: CustomersAsked | undefined): void {
    if (!asked) return void this.streams.delete(stream);
    const seen = this.streams.get(stream);
    this.streams.set(stream, {
      ...asked,
      since: seen?.since ?? this.now(),
      askedAtStart: seen?.askedAtStart ?? asked.asked,
    });
  }

  /** True while a per-customer span is under way. */
  get active(): boolean {
    return this.streams.size > 0;
  }

  /** Each stream under way, with its time left. */
  list(): StreamCustomers[] {
    const now = this.now();
    return [...this.streams].map(([stream, s]) => {
      const { etaSeconds } = pace(s.since, now, s.askedAtStart, Math.min(s.asked, s.selected), s.selected);
      return { stream, asked: s.asked, selected: s.selected, etaSeconds };
    });
  }

  /** ` | loyalty_status: 120/386 customers, 25s left` for each stream under way, or nothing. */
  text(): string {
    return this.list()
      .map(
        (s) =>
          ` | ${s.stream}: ${count(s.asked)}/${count(s.selected)} customers, ${s.etaSeconds === null ? 'estimating' : `${formatEta(s.etaSeconds)} left`}`,
      )
      .join('');
  }
}

/**
 * A progress bar on a terminal — windows, records, rate and time left, which says `estimating` until a window is
 * done — or, for a scheduler or a pipe, a `<label> progress` JSON log line every few seconds with the same numbers.
 *
 * While a per-customer span runs, its stream's customers asked and selected show too, with their own time left
 * ({@link CustomersProgress}), and the run's time left says `estimating`: the span's windows are all done at its
 * end, so the rate in windows per second says nothing of how long it takes.
 *
 * @example
 * const progress = createProgress({ label: 'backfill', total: 730, done: 0, stream: process.stderr, bar: true, logger });
 * progress.update(12, 4_000);
 * progress.stop();
 */
export function createProgress(options: ProgressOptions): ProgressDisplay {
  const now = options.now ?? Date.now;
  const startedAt = now();
  const startDone = options.done;
  let done = options.done;
  let records = 0;
  const customers = new CustomersProgress(now);
  const runEta = (etaSeconds: number | null) => (customers.active ? null : etaSeconds);
  const numbers = () => {
    const { rate, etaSeconds } = pace(startedAt, now(), startDone, done, options.total);
    return {
      records: count(records),
      rate: rate.toFixed(1),
      left: formatEta(runEta(etaSeconds)),
      customers: customers.text(),
    };
  };
  if (options.bar) {
    const bar = new cliProgress.SingleBar(
      {
        stream: options.stream,
        format: `${options.label} [{bar}] {value}/{total} windows{customers} | {records} records | {rate} windows/s | ETA {left}`,
        hideCursor: true,
        fps: 5,
      },
      cliProgress.Presets.shades_classic,
    );
    bar.start(options.total, done, numbers());
    let barStopped = false;
    return {
      update(windowsDone, recordsRead) {
        done = windowsDone;
        records = recordsRead;
        bar.update(done, numbers());
      },
      customers(stream, asked) {
        customers.set(stream, asked);
        bar.update(done, numbers());
      },
      stop() {
        if (barStopped) return;
        barStopped = true;
        bar.update(done, numbers());
        bar.stop();
      },
    };
  }
  const every = options.logEveryMs ?? 5000;
  let lastLog = startedAt;
  let stopped = false;
  const log = () => {
    lastLog = now();
    const { rate, etaSeconds } = pace(startedAt, lastLog, startDone, done, options.total);
    const asked = customers.active ? { customers: customers.list() } : {};
    options.logger.info(
      {
        windowsDone: done,
        windowsTotal: options.total,
        ...asked,
        records,
        windowsPerSecond: Math.round(rate * 100) / 100,
        etaSeconds: runEta(etaSeconds),
      },
      `${options.label} progress`,
    );
  };
  return {
    update(windowsDone, recordsRead) {
      done = windowsDone;
      records = recordsRead;
      if (now() - lastLog >= every) log();
    },
    customers(stream, asked) {
      customers.set(stream, asked);
      if (now() - lastLog >= every) log();
    },
    stop() {
      if (stopped) return;
      stopped = true;
      log();
    },
  };
}
