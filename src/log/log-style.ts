import type { LogFormat } from './logger.js';

/**
 * How this process writes its logs: chosen once by the command line (`--log-format`, or whether stderr is a terminal).
 * A module of its own, with nothing behind it, so that a program running commands in its own process (the test
 * suite) can set it without loading the commands.
 */
let logStyle: { format: LogFormat; colour: boolean; destination?: NodeJS.WritableStream } = {
  format: 'json',
  colour: false,
};

/**
 * Sets how a command's logger writes: JSON lines, or human lines (in colour, on a terminal without `NO_COLOR`), to
 * stderr or, for a program running commands in its own process (the test suite), to `destination`. Without one, the
 * destination set before is kept: the command line chooses the format, the program that runs it where lines go.
 */
export function useLogFormat(
  format: LogFormat,
  colour: boolean,
  destination: NodeJS.WritableStream | undefined = logStyle.destination,
): void {
  logStyle = { format, colour, ...(destination ? { destination } : {}) };
}

/** How the command line chose to write logs. */
export function currentLogStyle(): { format: LogFormat; colour: boolean; destination?: NodeJS.WritableStream } {
  return logStyle;
}
