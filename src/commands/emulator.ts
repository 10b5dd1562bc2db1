import { IANAZone } from 'luxon';
import { CommandError, ExitCode } from './exit-codes.js';
import { isoDay } from '../config/config-schema.js';
import {
  type EmulatorOptions,
  type EmulatorReadings,
  type FaultOptions,
  parseReadings,
  resolveFaults,
  startEmulator,
} from '../emulator/index.js';
import { redactHookUrl } from '../webhook/hook-path.js';
import { redactUrl } from '../log/redact.js';
import { Option, type Command } from 'commander';

/** Fault flags of `loyalty-etl emulator`, as commander hands them over (text). */
export interface FaultFlags {
  latency?: string;
  jitter?: string;
  serverErrors?: string;
  tooManyRequests?: string;
  retryAfter?: string;
  hangs?: string;
  cutBodies?: string;
  errorBodies?: string;
  errorBodyCode?: string;
  drift?: string;
  driftReads?: string;
  downAfter?: string;
  faultSeed?: string;
}

export interface EmulatorCommandOptions extends FaultFlags {
  port: string;
  host: string;
  seed: string;
  accounts: string;
  start?: string;
  end?: string;
  timezone?: string;
  authHeader?: string;
  badRate?: string;
  contactlessRate?: string;
  /** The first day of a season of setup changes (`--setup-season`). */
  setupSeason?: string;
  postingsOrder?: string;
  /** Loyalty webhook subscriber URLs (`--webhook`, repeatable). */
  webhook?: string[];
  /** Readings of the spec's open conventions, `key=value` (`--reading`, repeatable). */
  reading?: string[];
}

/** `loyalty-etl emulator`: serves the emulated source until interrupted. */
export async function emulatorCommand(options: EmulatorCommandOptions): Promise<void> {
  const opts = emulatorOptions(options);
  for (const url of options.webhook ?? []) {
    if (!/^https?:\/\/[^/]/.test(url))
      throw new CommandError(`--webhook: ${redactUrl(url)} is not an http(s) URL`, ExitCode.usage);
    // fetch refuses such a URL, and the subscriber list is printed and served: the credential has no place here
    if (/^https?:\/\/[^/]*@/.test(url))
      throw new CommandError(
        '--webhook: a subscriber URL must not hold a user or password (user:password@); the receiver takes its secret in the path or a header',
        ExitCode.usage,
      );
  }
  const emulator = await startEmulator({
    ...opts,
    port: whole('--port', options.port, 0, 65535),
    host: options.host,
    webhooks: { subscribers: options.webhook ?? [] },
    // Points expire at month boundaries of the real clock; a check a minute is soon enough and costs nothing in between.
    expiryCheckMs: 60_000,
  }).catch((error: unknown) => {
    // the options the flags did not check themselves (the time zone, the data range) are checked by the emulator
    if (error instanceof RangeError) throw new CommandError(`emulator: ${error.message}`, ExitCode.usage);
    throw error;
  });
  const o = emulator.options;
  const faults = describeFaults(opts.faults ?? {});
  process.stdout.write(
    `emulator listening on ${emulator.url}\n` +
      `  ${o.accounts} accounts, data ${o.startDate}..${o.endDate} (${o.timezone}), seed ${o.seed}${opts.auth ? `, auth header ${opts.auth.header}` : ''}\n` +
      (faults ? `  faults: ${faults} (fault seed ${o.faults.seed})\n` : '') +
      (options.reading?.length ? `  readings: ${options.reading.join(', ')}\n` : '') +
      `  ground truth: ${emulator.url}/_emulator/truth/accounts?start=${o.startDate}&end=${o.endDate}\n` +
      (options.webhook?.length ? `  loyalty webhook: ${options.webhook.map(shownSubscriber).join(', ')}\n` : ''),
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
  for (const [flag, value] of [
    ['--start', options.start],
    ['--end', options.end],
    ['--setup-season', options.setupSeason],
  ] as const) {
    if (value !== undefined && !isoDay.safeParse(value).success)
      throw new CommandError(`${flag}: ${value} is not a day YYYY-MM-DD`, ExitCode.usage);
  }
  if (options.timezone !== undefined && !IANAZone.isValidZone(options.timezone))
    throw new CommandError(
      `--timezone: '${options.timezone}' is no IANA time zone (e.g. Europe/Athens)`,
      ExitCode.usage,
    );
  const token = process.env.LOYALTY_API_TOKEN;
  if (options.authHeader && !token)
    throw new CommandError('--auth-header needs LOYALTY_API_TOKEN set to the expected secret', ExitCode.usage);
  const badRate = options.badRate === undefined ? 0 : share('--bad-rate', options.badRate);
  const contactlessRate =
    options.contactlessRate === undefined ? 0 : share('--contactless-rate', options.contactlessRate);
  if (options.postingsOrder && !['newest-first', 'oldest-first'].includes(options.postingsOrder)) {
    throw new CommandError(`--postings-order: use newest-first or oldest-first`, ExitCode.usage);
  }
  const seed = whole('--seed', options.seed, 0, 2 ** 31);
  return {
    seed,
    accounts: whole('--accounts', options.accounts, 1, 100_000_000),
    startDate: options.start,
    endDate: options.end,
    timezone: options.timezone,
    auth: options.authHeader && token ? { header: options.authHeader, value: token } : undefined,
    badRecordRate: badRate,
    contactlessRate,
    ...(options.setupSeason ? { setupSeason: options.setupSeason } : {}),
    postingsOrder: options.postingsOrder as EmulatorOptions['postingsOrder'],
    faults: faultOptions(options, seed),
    readings: readingOptions(options.reading ?? []),
  };
}

/** The readings asked for by `--reading key=value` flags. */
export function readingOptions(texts: readonly string[]): EmulatorReadings {
  try {
    return parseReadings(texts);
  } catch (error) {
    throw new CommandError(`--reading: ${(error as Error).message}`, ExitCode.usage);
  }
}

/** The faults asked for by flags, checked as a whole (e.g. shares adding up to more than 1). */
export function faultOptions(flags: FaultFlags, seed = 1): FaultOptions {
  const faults: FaultOptions = {};
  const number = (flag: string, value: string | undefined, parse: (flag: string, value: string) => number) =>
    value === undefined ? undefined : parse(flag, value);
  const set = <K extends keyof FaultOptions>(key: K, value: FaultOptions[K] | undefined) => {
    if (value !== undefined) faults[key] = value;
  };
  set(
    'latencyMs',
    number('--latency', flags.latency, (f, v) => whole(f, v, 0, 600_000)),
  );
  set(
    'jitterMs',
    number('--jitter', flags.jitter, (f, v) => whole(f, v, 0, 600_000)),
  );
  set('serverErrorRate', number('--server-errors', flags.serverErrors, share));
  set('tooManyRequestsRate', number('--too-many-requests', flags.tooManyRequests, share));
  set(
    'retryAfterSeconds',
    number('--retry-after', flags.retryAfter, (f, v) => whole(f, v, 0, 3600)),
  );
  set('hangRate', number('--hangs', flags.hangs, share));
  set('cutBodyRate', number('--cut-bodies', flags.cutBodies, share));
  set('errorBodyRate', number('--error-bodies', flags.errorBodies, share));
  set(
    'errorBodyCode',
    number('--error-body-code', flags.errorBodyCode, (f, v) => whole(f, v, 1000, 1999)),
  );
  set('driftRate', number('--drift', flags.drift, share));
  set(
    'driftReads',
    number('--drift-reads', flags.driftReads, (f, v) => whole(f, v, 0, 1_000_000)),
  );
  set(
    'downAfter',
    number('--down-after', flags.downAfter, (f, v) => whole(f, v, 0, Number.MAX_SAFE_INTEGER)),
  );
  set(
    'seed',
    number('--fault-seed', flags.faultSeed, (f, v) => whole(f, v, 0, 2 ** 31)),
  );
  try {
    resolveFaults(faults, seed);
  } catch (error) {
    throw new CommandError(`fault flags: ${(error as Error).message}`, ExitCode.usage);
  }
  return faults;
}

/** One line naming the faults switched on, or '' when there are none. */
function describeFaults(faults: FaultOptions): string {
  const parts: string[] = [];
  const pct = (x: number) => `${+(x * 100).toFixed(2)}%`;
  if (faults.latencyMs || faults.jitterMs)
    parts.push(`latency ${faults.latencyMs ?? 0} ms + up to ${faults.jitterMs ?? 0} ms`);
  if (faults.serverErrorRate) parts.push(`${pct(faults.serverErrorRate)} 5xx`);
  if (faults.tooManyRequestsRate)
    parts.push(`${pct(faults.tooManyRequestsRate)} 429 (Retry-After ${faults.retryAfterSeconds ?? 1} s)`);
  if (faults.hangRate) parts.push(`${pct(faults.hangRate)} hangs`);
  if (faults.cutBodyRate) parts.push(`${pct(faults.cutBodyRate)} cut bodies`);
  if (faults.errorBodyRate) parts.push(`${pct(faults.errorBodyRate)} ${faults.errorBodyCode ?? 1006} error bodies`);
  if (faults.driftRate)
    parts.push(`${pct(faults.driftRate)} of listings drift (${faults.driftReads ?? 1} read(s) each)`);
  if (faults.downAfter !== undefined && faults.downAfter !== null)
    parts.push(`down after ${faults.downAfter} requests`);
  return parts.join(', ');
}

function share(flag: string, value: string): number {
  const n = Number(value);
  if (value.trim() === '' || !(n >= 0 && n <= 1))
    throw new CommandError(`${flag}: ${value} is not a share from 0 to 1`, ExitCode.usage);
  return n;
}

function whole(flag: string, value: string, min: number, max: number): number {
  const n = Number(value);
  if (value.trim() === '' || !Number.isInteger(n) || n < min || n > max)
    throw new CommandError(`${flag}: ${value} is not a whole number from ${min} to ${max}`, ExitCode.usage);
  return n;
}

/** A subscriber URL without the receiver secret its path may hold (`/hooks/<secret>`). */
function shownSubscriber(url: string): string {
  const parsed = new URL(url);
  return `${parsed.origin}${redactHookUrl(parsed.pathname + parsed.search)}`;
}

/** `loyalty-etl emulator` and its flags. */
export function registerEmulator(program: Command): void {
  program
    .command('emulator')
    .description('serve the emulated source (auth: --auth-header with the secret in LOYALTY_API_TOKEN)')
    .option('--port <n>', 'port (0 picks a free one)', '8787')
    .option('--host <host>', 'address to listen on', '127.0.0.1')
    .option('--seed <n>', 'seed of the generated data', '1')
    .option('--accounts <n>', 'number of customers', '300')
    .option('--start <day>', 'first day with data (default: 89 days before --end)')
    .option('--end <day>', 'last day with data (default: yesterday)')
    .option('--timezone <zone>', 'business time zone', 'Europe/Athens')
    .option('--auth-header <name>', 'require this header to carry LOYALTY_API_TOKEN')
    .option('--bad-rate <share>', 'share of malformed records in the exports', '0')
    .option('--contactless-rate <share>', 'share of customers with neither phone nor e-mail', '0')
    .option('--setup-season <day>', 'from this day the business changes its custom fields and survey questions')
    .addOption(
      new Option('--postings-order <order>', 'order of postings listings').choices(['newest-first', 'oldest-first']),
    )
    .option(
      '--webhook <url>',
      'call this loyalty webhook subscriber on every change of points (repeatable)',
      (url: string, urls: string[] = []) => [...urls, url],
    )
    .option(
      '--reading <key=value>',
      'serve one open convention another way, e.g. errorStatus=200 (repeatable; src/emulator/README.md)',
      (text: string, texts: string[] = []) => [...texts, text],
    )
    .option('--latency <ms>', 'fault: delay before every answer')
    .option('--jitter <ms>', 'fault: extra random delay, from 0 to this')
    .option('--server-errors <share>', 'fault: share of requests answered 500, 502 or 503')
    .option('--too-many-requests <share>', 'fault: share of requests answered 429 with Retry-After')
    .option('--retry-after <s>', 'fault: Retry-After of those 429s, in seconds (default 1)')
    .option('--hangs <share>', 'fault: share of requests never answered')
    .option('--cut-bodies <share>', 'fault: share of answers cut off mid-JSON')
    .option('--error-bodies <share>', 'fault: share of requests answered HTTP 200 with a 1xxx error body')
    .option('--error-body-code <code>', 'fault: code of those error bodies: 1002, 1004, 1006 or 1010 (default 1006)')
    .option('--drift <share>', 'fault: share of listings that change while they are paged')
    .option('--drift-reads <n>', 'fault: page reads that see a drifting listing changed (default 1)')
    .option('--down-after <n>', 'fault: answer 503 to every request after the first N')
    .option('--fault-seed <n>', 'seed of the faults (default: --seed)')
    .action(emulatorCommand);
}
