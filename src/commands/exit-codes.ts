import type { ErrorKind } from '../plan/error-kind.js';

/** Exit codes, for schedulers (README: "Exit codes"). */
export const ExitCode = {
  /** Every window asked for was loaded. */
  ok: 0,
  /** At least one window failed (source down, too many rejects, …); the others were loaded. */
  windowsFailed: 1,
  /** The source or the warehouse cannot be reached, or the source refused the credentials. */
  unreachable: 1,
  /** Bad command line or configuration: nothing was attempted. */
  usage: 2,
  /** The warehouse or the job is held by another process: nothing was attempted. */
  busy: 3,
  /** `verify` found windows whose counts differ from the source's. */
  gaps: 4,
  /** Everything was loaded, but the read-only copy for readers (DuckDB) could not be published: they keep the previous one. */
  unpublished: 5,
  /** `verify` cannot prove something under the service's reading of the spec, and says why ("cannot prove …, because …"). */
  cannotProve: 6,
  /** `probe` found the config and the service disagree on a convention (the lines to set are printed). */
  probeDisagrees: 7,
  /** The warehouse was migrated or written by a newer release of loyalty-etl: nothing was done, the warehouse is untouched. */
  newerWarehouse: 8,
  /** `probe` could not tell whether the config and the service agree on a `jobs.yaml` key: no data where it looked, or its requests ran out. */
  probeCouldNotTell: 9,
  /** The run was interrupted by SIGINT (Ctrl-C), as a shell reports it: 128 + the signal's number. */
  interrupted: 130,
  /** The run was interrupted by SIGTERM. */
  terminated: 143,
  /** The warehouse is damaged (a block fails its checksum): it cannot be read, and running again fails the same way. */
  damaged: 10,
  /** Anything unexpected: a bug. */
  internal: 70,
} as const;

/**
 * The exit code of each kind of error (`plan/error-kind.ts`): the one place a kind becomes a code. A new kind is
 * one line here, and its code one row of README's "Exit codes".
 */
export const EXIT_CODE_OF_KIND: Readonly<Record<ErrorKind, number>> = {
  config: ExitCode.usage,
  'unsafe-target': ExitCode.usage,
  unreachable: ExitCode.unreachable,
  source: ExitCode.unreachable,
  busy: ExitCode.busy,
  'newer-warehouse': ExitCode.newerWarehouse,
  // SIGINT's; a SIGTERM's code is read from the error (commands/interruption.ts)
  interrupted: ExitCode.interrupted,
  // the windows committed stay; the next run, once there is room, takes the others
  'disk-full': ExitCode.windowsFailed,
  damaged: ExitCode.damaged,
};

/** An error that ends the command with a given exit code and one clear line. */
export class CommandError extends Error {
  override readonly name = 'CommandError';
  constructor(
    message: string,
    readonly exitCode: number,
  ) {
    super(message);
  }
}
