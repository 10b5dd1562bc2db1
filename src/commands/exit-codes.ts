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
  /** Anything unexpected: a bug. */
  internal: 70,
} as const;

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
