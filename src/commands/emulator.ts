import { CommandError, ExitCode } from '../cli/exit-codes.js';
import { isoDay } from '../config/config-schema.js';
import { startEmulator, type EmulatorOptions } from '../emulator/index.js';

export interface EmulatorCommandOptions {
  port: string;
  host: string;
  seed: string;
  accounts: string;
  start?: string;
  end?: string;
  timezone?: string;
  authHeader?: string;
  badRate?: string;
  postingsOrder?: string;
  /** Loyalty webhook subscriber URLs (`--webhook`, repeatable). */
  webhook?: string[];
}

/** `loyalty-etl emulator`: serves the emulated source until interrupted. */
export async function emulatorCommand(options: EmulatorCommandOptions): Promise<void> {
  const opts = emulatorOptions(options);
  for (const url of options.webhook ?? []) {
    if (!/^https?:\/\/[^/]/.test(url)) throw new CommandError(`--webhook: ${url} is not an http(s) URL`, ExitCode.usage);
  }
  const emulator = await startEmulator({ ...opts, port: whole('--port', options.port, 0, 65535), host: options.host, webhooks: { subscribers: options.webhook ?? [] } });
  const o = emulator.options;
  process.stdout.write(
    `emulator listening on ${emulator.url}\n` +
      `  ${o.accounts} accounts, data ${o.startDate}..${o.endDate} (${o.timezone}), seed ${o.seed}${opts.auth ? `, auth header ${opts.auth.header}` : ''}\n` +
      `  ground truth: ${emulator.url}/_emulator/truth/accounts?start=${o.startDate}&end=${o.endDate}\n` +
      (options.webhook?.length ? `  loyalty webhook: ${options.webhook.join(', ')}\n` : ''),
  );
  await new Promise<void>((resolve) => {
    const stop = () => {
      void emulator.close().then(resolve);
    };
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
}

/** Emulator options from command-line flags; the auth secret comes from LOYALTY_API_TOKEN. */
export function emulatorOptions(options: Omit<EmulatorCommandOptions, 'port' | 'host'>): EmulatorOptions {
  for (const [flag, value] of [['--start', options.start], ['--end', options.end]] as const) {
    if (value !== undefined && !isoDay.safeParse(value).success) throw new CommandError(`${flag}: ${value} is not a day YYYY-MM-DD`, ExitCode.usage);
  }
  const token = process.env.LOYALTY_API_TOKEN;
  if (options.authHeader && !token) throw new CommandError('--auth-header needs LOYALTY_API_TOKEN set to the expected secret', ExitCode.usage);
  const badRate = options.badRate === undefined ? 0 : Number(options.badRate);
  if (!(badRate >= 0 && badRate <= 1)) throw new CommandError(`--bad-rate: ${options.badRate} is not a share from 0 to 1`, ExitCode.usage);
  if (options.postingsOrder && !['newest-first', 'oldest-first'].includes(options.postingsOrder)) {
    throw new CommandError(`--postings-order: use newest-first or oldest-first`, ExitCode.usage);
  }
  return {
    seed: whole('--seed', options.seed, 0, 2 ** 31),
    accounts: whole('--accounts', options.accounts, 1, 100_000_000),
    startDate: options.start,
    endDate: options.end,
    timezone: options.timezone,
    auth: options.authHeader && token ? { header: options.authHeader, value: token } : undefined,
    badRecordRate: badRate,
    postingsOrder: options.postingsOrder as EmulatorOptions['postingsOrder'],
  };
}

function whole(flag: string, value: string, min: number, max: number): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < min || n > max) throw new CommandError(`${flag}: ${value} is not a whole number from ${min} to ${max}`, ExitCode.usage);
  return n;
}
