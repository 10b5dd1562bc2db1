import { KindedError } from '../../plan/error-kind.js';

/**
 * The errors of load/, in one place: those the command line turns into an exit code say their kind
 * ({@link KindedError}); the others are caught by the command that knows what they mean (`sql`, `export`, `publish`).
 */

/**
 * The warehouse as configured cannot be used: a DuckDB path that is no DuckDB database or whose directory cannot
 * be made, or — for the commands that only look at a warehouse (`check`, `status`, `verify`) — one that does not
 * exist yet. A mistake of the configuration (`destination`, `LOYALTY_WAREHOUSE`), not of the warehouse.
 */
export class WarehouseConfigError extends KindedError {
  override readonly name = 'WarehouseConfigError';
  readonly kind = 'config';
}

/**
 * The warehouse was migrated or written by a newer release of loyalty-etl than this one: it is left untouched, as
 * this release could read its tables wrongly or undo what the newer one wrote.
 */
export class WarehouseNewerError extends KindedError {
  override readonly name = 'WarehouseNewerError';
  readonly kind = 'newer-warehouse';
}

/**
 * Whether a statement failed because of the values it was given (a value out of range, text a JSON column
 * refuses), so that running it again with the same values fails again; anything else (a connection lost, a disk
 * full) may work later. PostgreSQL says so by SQLSTATE (class 22, data exception; class 23 but a unique key;
 * 54, a program limit such as a JSON nested too deep); DuckDB by the kind of error its message starts with.
 */
export function isDataError(error: unknown): boolean {
  const e = error as { code?: unknown; message?: unknown } | null;
  if (typeof e?.code === 'string' && /^[0-9A-Z]{5}$/.test(e.code))
    return /^(22|54)/.test(e.code) || (e.code.startsWith('23') && e.code !== '23505');
  return typeof e?.message === 'string' && /^(Conversion|Invalid Input|Out of Range) Error/.test(e.message);
}

/**
 * A statement of the pipeline waited its longest (`destination.busy_timeout_s`) for a lock another session holds:
 * the message names the holder, so that whoever reads it can end that session or wait for it.
 */
export class WarehouseLockTimeoutError extends KindedError {
  override readonly name = 'WarehouseLockTimeoutError';
  readonly kind = 'busy';
}

/**
 * A commit refused under `destination.analysts.schema_contract: freeze`: values no longer fit the type of a column
 * analysts read. Its windows fail, and load when the values fit again or the contract allows them.
 */
export class SchemaContractRefusal extends Error {
  override readonly name = 'SchemaContractRefusal';
}

/** A statement that would write, refused: the session is read-only. */
export class ReadOnlyRefusal extends Error {
  override readonly name = 'ReadOnlyRefusal';
}

/** A statement the warehouse could not run (a syntax error, an unknown table, …): its message, on one line. */
export class QueryError extends Error {
  override readonly name = 'QueryError';
}

/** The warehouse could not be reached, refused the connection or lost it; the message never holds credentials. */
export class WarehouseConnectionError extends KindedError {
  override readonly name = 'WarehouseConnectionError';
  readonly kind = 'unreachable';
}

/** A problem with the output folder (a file, a link, a table name that is no file name): the user's to fix. */
export class ExportPathError extends Error {
  override readonly name = 'ExportPathError';
}

/** A file is not written because its path holds something other than a regular file (a FIFO, a device, a link, a folder). */
export class UnsafeTargetError extends KindedError {
  override readonly name = 'UnsafeTargetError';
  readonly kind = 'unsafe-target';
}

/** A publish could not replace the readers' copy; they keep the one they had. */
export class PublishError extends Error {
  override readonly name = 'PublishError';
}

/** The warehouse file is open in another process; DuckDB allows one writer process per file. */
export class WarehouseBusyError extends KindedError {
  override readonly name = 'WarehouseBusyError';
  readonly kind = 'busy';
  constructor(
    message: string,
    /** The process holding the file, when DuckDB names it. */
    readonly holderPid?: number,
  ) {
    super(message);
  }
}

/**
 * Personal data is to be hashed where nothing gives the key: the warehouse keeps none yet (no run has hashed) and
 * `LOYALTY_PII_SALT` is not set. A matter of configuration: set the salt, or choose another policy.
 */
export class PiiKeyMissingError extends KindedError {
  override readonly name = 'PiiKeyMissingError';
  readonly kind = 'config';
}

/**
 * A write failed because a disk is full: the line names the file and the file system it is on (`disk-full.ts` tells
 * one from the error of a write).
 */
export class DiskFullError extends KindedError {
  override readonly name = 'DiskFullError';
  readonly kind = 'disk-full';
  constructor(
    readonly full: { path: string | undefined; where: string; message: string },
    options?: { cause?: unknown },
  ) {
    super(full.message, options);
  }
}

/**
 * A read found the warehouse damaged (a block whose checksum does not match): not transient, running again fails the
 * same way (`warehouse-damage.ts` tells one from the error of a read).
 */
export class WarehouseDamagedError extends KindedError {
  override readonly name = 'WarehouseDamagedError';
  readonly kind = 'damaged';
}

/** PostgreSQL's SQLSTATEs of a session the server ended or could not start: class 08, and 57P01–57P03 (shutdown). */
const CONNECTION_LOST_STATE = /^(08...|57P0[123])$/;

/**
 * Whether a statement failed because the session to the warehouse was lost (the server restarted, crashed, ended
 * the session, or the network dropped) rather than because of the statement: its outcome is then unknown to this
 * session, and a new session must read the ledger again.
 */
export function isConnectionLoss(error: unknown): boolean {
  const e = error as { code?: unknown; message?: unknown } | null;
  if (typeof e?.code === 'string' && CONNECTION_LOST_STATE.test(e.code)) return true;
  if (typeof e?.code === 'string' && /^(ECONNRESET|ECONNREFUSED|EPIPE|ETIMEDOUT|EHOSTUNREACH)$/.test(e.code))
    return true;
  return (
    typeof e?.message === 'string' &&
    /^(Connection terminated|Client has encountered a connection error)/.test(e.message)
  );
}
