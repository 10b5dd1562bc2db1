import { CommandError, ExitCode } from './exit-codes.js';
import { busyTimeoutOf, eventSpoolOf, publishPathOf } from '../config/duckdb-files.js';
import type { ResolvedConfig } from '../config/load-config.js';
import { settlePiiKey } from '../load/derived/pii-key.js';
import type { Destination, PublishedCopy } from '../load/destination.js';
import { warehouseOf } from '../load/warehouses.js';
import type { Logger } from '../log/logger.js';
import { redact } from '../log/redact.js';
import { resolve } from 'node:path';
import { DiskFullError, diskFullOf } from '../load/warehouse/disk-full.js';
import { damageOf } from '../load/warehouse/warehouse-damage.js';
import { EventSpool } from '../webhook/event-spool.js';
import { ingestSpooledEvents, type SpoolIngest } from '../webhook/spool-ingest.js';

/** What a load session did around the load itself. */
export interface LoadSession<T> {
  /** What the load returned. */
  value: T;
  /** Webhook events moved from the receiver's spool into `loyalty_events` before the load (DuckDB). */
  ingested?: SpoolIngest;
  /** The copy published for readers after it (DuckDB), or why it could not be. */
  published?: { copy: PublishedCopy } | { error: string };
}

/**
 * Opens the warehouse for a load (`run`, `backfill`, the demo) and closes it whatever happens. Around the load,
 * for a DuckDB warehouse:
 * - while another process holds the file, it waits for it (`destination.busy_timeout_s`), then exits 3;
 * - first, the webhook events the receiver spooled go into `loyalty_events`, so the load's customer selection
 *   sees them;
 * - after a load that ended (windows failed or not), the read-only copy for analysts is published. A publish that
 *   fails does not undo the load: it is logged, and {@link failIfUnpublished} turns it into exit code 5.
 */
export async function usingLoadSession<T>(
  config: ResolvedConfig,
  logger: Logger,
  load: (destination: Destination) => Promise<T>,
): Promise<LoadSession<T>> {
  const destination = await warehouseOf(config.destination).openWhenFree({
    timeoutSeconds: busyTimeoutOf(config.destination),
    logger,
  });
  try {
    config = { ...config, analysts: await analystsKeyOf(destination, config, logger) };
    await destination.keepAnalysts?.(config.analysts, 'analysts');
    const spool = eventSpoolOf(config.destination);
    const ingested =
      spool === undefined ? undefined : await ingestSpooledEvents(destination, new EventSpool(spool), logger);
    const value = await load(destination);
    const published = await publishForReaders(destination, config, logger);
    return { value, ...(ingested ? { ingested } : {}), ...(published ? { published } : {}) };
  } finally {
    await destination.close();
  }
}

/**
 * The analysts' policy with the key its hashes are made with (`load/derived/pii-key.ts`), saying when the key was
 * made and when `LOYALTY_PII_SALT` changed it: analysts' joins on hashed columns across the change no longer match.
 */
export async function analystsKeyOf(
  destination: Destination,
  config: ResolvedConfig,
  logger: Logger,
): Promise<ResolvedConfig['analysts']> {
  const settled = await settlePiiKey(destination, config.analysts);
  if (settled.generated)
    logger.info(
      'made the key that salts the hashes of personal data analysts read, kept in the warehouse (_etl_pii_key); LOYALTY_PII_SALT would take its place',
    );
  if (settled.changed)
    logger.warn(
      { keptSince: settled.changed.keptSince, previous: settled.changed.previousOrigin },
      `LOYALTY_PII_SALT is not the salt this warehouse hashed personal data with until now (${settled.changed.previousOrigin}, since ${settled.changed.keptSince}): every hashed value analysts read changes, and their joins across the change no longer match`,
    );
  return settled.policy;
}

/** Publishes the copy for readers when the warehouse has one (`destination.publish_path`), logging the outcome. */
export async function publishForReaders(
  destination: Destination,
  config: ResolvedConfig,
  logger: Logger,
): Promise<LoadSession<unknown>['published']> {
  const target = publishPathOf(config.destination);
  if (target === undefined || !destination.publishCopy) return undefined;
  try {
    const copy = await destination.publishCopy(target, config.analysts);
    const rewrite = copy.rewrite;
    // a copy written whole costs in proportion to the warehouse, not to what the load changed: said, with why
    if (rewrite?.how === 'whole')
      logger.info(
        { path: copy.path, why: rewrite.why, tables: rewrite.tables },
        `the copy for analysts was written whole, every table again: ${rewrite.why ?? ''}`,
      );
    logger.info(
      {
        path: copy.path,
        bytes: copy.bytes,
        seconds: Number(copy.seconds.toFixed(2)),
        writesHeldSeconds: Number(copy.heldSeconds.toFixed(2)),
        ...(rewrite
          ? {
              rewrite: rewrite.how,
              tablesWritten: rewrite.written.length,
              rowsWritten: rewrite.rowsWritten,
              tables: rewrite.tables,
              ...(rewrite.dropped.length ? { tablesDropped: rewrite.dropped } : {}),
              fingerprintSeconds: Number(rewrite.fingerprintSeconds.toFixed(2)),
            }
          : {}),
      },
      'published the read-only copy of the warehouse for analysts',
    );
    return { copy };
  } catch (error) {
    // a damaged warehouse cannot be copied: that is the warehouse's failure, not the publish's
    if (damageOf(error) !== undefined) throw error;
    // the warehouse's own disk, full when it checkpoints: no failed publish, the warehouse itself cannot write
    const full = diskFullOf(error);
    if (full?.path !== undefined && isWarehouseFile(full.path, config))
      throw new DiskFullError(
        {
          ...full,
          message: `the disk is full: ${full.where}: the warehouse could not write its checkpoint (the windows loaded are committed in its write-ahead log) and the copy for analysts was not published. Free space there, then \`loyalty-etl publish\` or the next run publishes it`,
        },
        { cause: error },
      );
    const message = redact(
      full ? `could not publish ${target}: the disk is full: ${full.where}` : (error as Error).message,
    );
    logger.error(
      { err: error, path: target },
      'could not publish the copy of the warehouse for analysts; they keep the previous one',
    );
    return { error: message };
  }
}

/** Whether `path` is the DuckDB warehouse file of `config` or its write-ahead log. */
function isWarehouseFile(path: string, config: ResolvedConfig): boolean {
  const { destination } = config;
  if (destination.type !== 'duckdb') return false;
  const warehouse = resolve(destination.path);
  return resolve(path) === warehouse || resolve(path) === `${warehouse}.wal`;
}

/** Lines for stdout about the events ingested and the copy published, if any (each ends with a newline). */
export function describeSession(session: Omit<LoadSession<unknown>, 'value'>): string {
  const lines: string[] = [];
  const ingested = session.ingested;
  if (ingested && ingested.stored + ingested.duplicates + ingested.unreadable + ingested.quarantined > 0) {
    lines.push(
      `webhook events from the spool: ${ingested.stored} stored, ${ingested.duplicates} already stored${ingested.unreadable ? `, ${ingested.unreadable} unreadable (moved aside)` : ''}${ingested.quarantined ? `, ${ingested.quarantined} not storable (kept in _etl_event_quarantine)` : ''}`,
    );
  }
  const published = session.published;
  if (published && 'error' in published)
    lines.push(`readers' copy NOT published (they keep the previous one): ${published.error}`);
  else if (published)
    lines.push(
      `published for readers: ${published.copy.path} (${(published.copy.bytes / 1e6).toFixed(1)} MB in ${published.copy.seconds.toFixed(1)} s${tablesWritten(published.copy)})`,
    );
  return lines.map((l) => `${l}\n`).join('');
}

/** How many tables of a copy that withholds personal data were written again, for the line on stdout. */
function tablesWritten(copy: PublishedCopy): string {
  const rewrite = copy.rewrite;
  if (!rewrite) return '';
  return rewrite.how === 'whole'
    ? ', every table written'
    : `, ${rewrite.written.length} of ${rewrite.tables} tables written, ${rewrite.rowsWritten} rows`;
}

/** Ends the command with exit code 5 when the copy for readers could not be published. */
export function failIfUnpublished(published: LoadSession<unknown>['published']): void {
  if (published && 'error' in published)
    throw new CommandError(
      `the load succeeded, but the readers' copy was not published: ${published.error}; \`loyalty-etl publish\` tries again`,
      ExitCode.unpublished,
    );
}
