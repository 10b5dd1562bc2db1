import { dirname, join } from 'node:path';
import type { DestinationSettings } from '../plan/job-plan.js';
import { ConfigError } from './config-error.js';

/** How long `run`, `backfill` and `publish` wait for a DuckDB file another process holds, by default. */
export const DEFAULT_BUSY_TIMEOUT_S = 300;

/** The warehouse file's name without `.duckdb`, in its folder: the stem of the files kept beside it. */
function stemOf(path: string): string {
  return path.endsWith('.duckdb') ? path.slice(0, -'.duckdb'.length) : path;
}

/**
 * Where a DuckDB warehouse's read-only copy for analysts is published: `destination.publish_path`, or
 * `<name>.published.duckdb` beside the warehouse; undefined when publishing is off (`publish_path: false`), or for
 * PostgreSQL (which serves readers itself).
 */
export function publishPathOf(destination: DestinationSettings): string | undefined {
  if (destination.type !== 'duckdb' || destination.path === ':memory:' || destination.publish_path === false)
    return undefined;
  return destination.publish_path ?? `${stemOf(destination.path)}.published.duckdb`;
}

/**
 * The folder the webhook receiver spools events into for a DuckDB warehouse: `destination.event_spool`, or
 * `<name>.events` beside the warehouse; undefined for PostgreSQL, into which the receiver writes directly.
 */
export function eventSpoolOf(destination: DestinationSettings): string | undefined {
  if (destination.type !== 'duckdb' || destination.path === ':memory:') return undefined;
  return destination.event_spool ?? `${stemOf(destination.path)}.events`;
}

/**
 * Seconds to wait for a DuckDB warehouse file another process holds: `LOYALTY_BUSY_TIMEOUT_S`, else
 * `destination.busy_timeout_s`, else {@link DEFAULT_BUSY_TIMEOUT_S}; 0 gives up at once.
 */
export function busyTimeoutOf(
  destination: DestinationSettings,
  env: Record<string, string | undefined> = process.env,
): number {
  const raw = env.LOYALTY_BUSY_TIMEOUT_S;
  if (raw !== undefined && raw !== '') {
    if (!/^\d+$/.test(raw) || Number(raw) > 86_400)
      throw new ConfigError('LOYALTY_BUSY_TIMEOUT_S', '', `${raw} is not a whole number of seconds from 0 to 86400`);
    return Number(raw);
  }
  return destination.busy_timeout_s ?? DEFAULT_BUSY_TIMEOUT_S;
}

/**
 * Where the raw archive of the service's answers is kept, and its retention: `destination.archive.path`, or beside a
 * DuckDB warehouse (`<name>.archive`), or for PostgreSQL `<database>.archive` beside the jobs file `configFile`;
 * undefined when `destination.archive` is false, or for an in-memory warehouse.
 */
export function archiveOf(
  destination: DestinationSettings,
  configFile: string,
): { root: string; keepDays?: number; maxBytes?: number } | undefined {
  const settings = destination.archive;
  if (settings === false) return undefined;
  const retention = {
    ...(settings?.keep_days ? { keepDays: settings.keep_days } : {}),
    ...(settings?.max_bytes ? { maxBytes: settings.max_bytes } : {}),
  };
  if (settings?.path) return { root: settings.path, ...retention };
  if (destination.type === 'duckdb')
    return destination.path === ':memory:' ? undefined : { root: `${stemOf(destination.path)}.archive`, ...retention };
  const database = decodeURIComponent(new URL(destination.url).pathname.slice(1)) || 'postgres';
  return { root: join(dirname(configFile), `${database.replace(/[^A-Za-z0-9_-]/g, '_')}.archive`), ...retention };
}
