import { pino, type Logger } from 'pino';
import pretty from 'pino-pretty';
import { redact } from './redact.js';

export type { Logger };

/** How log lines are written: JSON lines for schedulers and log shippers, or human lines for a person at a terminal. */
export type LogFormat = 'json' | 'pretty';

export interface LoggerOptions {
  /** pino's level (default `LOYALTY_LOG_LEVEL`, else `info`). */
  level?: string;
  /** Where lines go (default stderr). */
  destination?: NodeJS.WritableStream;
  /** Default `json`. */
  format?: LogFormat;
  /** Human lines in colour (default: never; the command line asks for it on a terminal unless `NO_COLOR`). */
  colour?: boolean;
}

/**
 * JSON lines on stderr, for schedulers, or human lines (level, time, message, then the fields on the same line).
 * Every line passes through {@link redact} as JSON, just before it is written or formatted, so a secret that reaches
 * a message, an error or a field is replaced in either format, not printed.
 */
export function createLogger(options: LoggerOptions = {}): Logger {
  const level = options.level ?? process.env.LOYALTY_LOG_LEVEL ?? 'info';
  const settings = {
    level,
    base: undefined,
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { level: (label: string) => ({ level: label }) },
    hooks: { streamWrite: redact },
    serializers: { err: pino.stdSerializers.err },
  };
  if (options.format !== 'pretty')
    return pino(settings, options.destination ?? pino.destination({ fd: 2, sync: true }));
  return pino(
    settings,
    pretty({
      destination: options.destination ?? 2,
      sync: true,
      colorize: options.colour === true,
      translateTime: 'SYS:HH:MM:ss',
      singleLine: true,
    }),
  );
}

/** A logger that writes nothing, for library use and tests that do not look at logs. */
export const silentLogger: Logger = pino({ level: 'silent' });
