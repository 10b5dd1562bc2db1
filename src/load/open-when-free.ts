import { readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from '../log/logger.js';
import { WarehouseBusyError } from './warehouse/warehouse-errors.js';

/** Options of {@link openWhenFree}. */
export interface WaitOptions {
  /** Give up after this many seconds of finding the file held (0: at once). */
  timeoutSeconds: number;
  logger: Logger;
  /** Longest pause between two attempts. Default 2000 ms. */
  maxPauseMs?: number;
}

/**
 * Opens a warehouse with `open` (a dialect's, `load/warehouses.ts`), but while another process holds a DuckDB file (an analyst's session
 * on it, a `run` of another job) it tries again until `timeoutSeconds` have passed, saying once what it waits for
 * and again every minute. A nightly job that meets a session left open waits for it instead of failing.
 *
 * @throws WarehouseBusyError when the file is still held at the end, naming how long it waited.
 */
export async function openWhenFree<T>(open: () => Promise<T>, options: WaitOptions): Promise<T> {
  const started = Date.now();
  let loggedAt = 0;
  for (let attempt = 0; ; attempt++) {
    try {
      const destination = await open();
      if (attempt > 0)
        options.logger.info({ waitedSeconds: Math.round((Date.now() - started) / 1000) }, 'warehouse free: going on');
      return destination;
    } catch (error) {
      if (!(error instanceof WarehouseBusyError)) throw error;
      const waited = (Date.now() - started) / 1000;
      if (waited >= options.timeoutSeconds) {
        if (options.timeoutSeconds === 0) throw error;
        throw new WarehouseBusyError(
          `${error.message}; waited ${Math.round(waited)} s for it (destination.busy_timeout_s, LOYALTY_BUSY_TIMEOUT_S)`,
          error.holderPid,
        );
      }
      if (Date.now() - loggedAt >= 60_000) {
        loggedAt = Date.now();
        options.logger.warn(
          {
            holder: describeProcess(error.holderPid),
            waitedSeconds: Math.round(waited),
            timeoutSeconds: options.timeoutSeconds,
          },
          `${error.message}: waiting for ${describeProcess(error.holderPid)} to close it, up to ${options.timeoutSeconds} s`,
        );
      }
      const pause = Math.min(
        options.maxPauseMs ?? 2000,
        100 * 2 ** Math.min(attempt, 5),
        Math.max(0, options.timeoutSeconds * 1000 - (Date.now() - started)),
      );
      await sleep(pause);
    }
  }
}

/** `process 1234 (duckdb)`: the holder's program name, where the system tells it (Linux). */
function describeProcess(pid: number | undefined): string {
  if (pid === undefined) return 'the other process';
  try {
    return `process ${pid} (${readFileSync(`/proc/${pid}/comm`, 'utf8').trim()})`;
  } catch {
    return `process ${pid}`;
  }
}
