/**
 * What kind of failure an error is, in the words the command line turns into an exit code (one table,
 * `commands/exit-codes.ts`). It lives in `plan/`, which imports nothing, so that every part may name it.
 *
 * - `config`: the configuration or environment is wrong (a key, a variable, a warehouse path, a folder).
 * - `unsafe-target`: a file would be written where the path holds something else (a link, a FIFO, a folder).
 * - `unreachable`: the warehouse cannot be reached or refused the connection.
 * - `source`: the source failed, or refused the credentials.
 * - `busy`: the warehouse or the job is held by another process or session.
 * - `newer-warehouse`: a newer release of loyalty-etl migrated or wrote the warehouse.
 * - `interrupted`: a signal stopped the run.
 * - `disk-full`: a write found its disk full.
 * - `damaged`: a read found the warehouse damaged (not transient).
 */
export type ErrorKind =
  | 'config'
  | 'unsafe-target'
  | 'unreachable'
  | 'source'
  | 'busy'
  | 'newer-warehouse'
  | 'interrupted'
  | 'disk-full'
  | 'damaged';

/**
 * An error that says what kind of failure it is. An error without a kind that reaches the command line is
 * unexpected: a bug.
 */
export abstract class KindedError extends Error {
  abstract readonly kind: ErrorKind;
}
