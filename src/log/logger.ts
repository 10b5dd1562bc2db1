import { pino, type Logger } from 'pino';
import { redact } from './redact.js';

export type { Logger };

/**
 * JSON lines on stderr, for schedulers. Every line passes through {@link redact} just before it is written,
 * so a secret that reaches a message, an error or a field is replaced, not printed.
 */
export function createLogger(options: { level?: string; destination?: NodeJS.WritableStream } = {}): Logger {
  const level = options.level ?? process.env.LOYALTY_LOG_LEVEL ?? 'info';
  return pino(
    {
      level,
      base: undefined,
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
      hooks: { streamWrite: redact },
      serializers: { err: pino.stdSerializers.err },
    },
    options.destination ?? pino.destination({ fd: 2, sync: true }),
  );
}

/** A logger that writes nothing, for library use and tests that do not look at logs. */
export const silentLogger: Logger = pino({ level: 'silent' });
