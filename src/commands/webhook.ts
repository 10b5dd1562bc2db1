import { randomUUID } from 'node:crypto';
import { CommandError, ExitCode } from './exit-codes.js';
import type { DestinationSettings } from '../plan/job-plan.js';
import { eventSpoolOf } from '../config/duckdb-files.js';
import { loadConfig } from '../config/load-config.js';
import { registerSecret } from '../log/redact.js';
import { HOOKS_PATH } from '../webhook/hook-path.js';
import { EventSpool } from '../webhook/event-spool.js';
import { type EventStore, WarehouseEventStore } from '../webhook/loyalty-event-store.js';
import { WEBHOOK_SECRET_ENV, readReceiverSecrets } from '../webhook/receiver-secrets.js';
import { WebhookGate, type WebhookGateOptions } from '../webhook/webhook-gate.js';
import { SpoolEventStore } from '../webhook/spool-event-store.js';
import { startWebhookReceiver } from '../webhook/webhook-receiver.js';
import { commandLogger, createArchive } from './job-session.js';
import type { AnswerArchive } from '../source/archive/answer-archive.js';
import { EventArchive } from '../source/archive/event-archive.js';
import type { Command } from 'commander';
import { ReceiverSecretError, WebhookGateOptionError } from '../webhook/webhook-errors.js';

export interface WebhookCommandOptions {
  port: string;
  host: string;
  config?: string;
  /** `--secret-header`: a header that may carry the secret, on `POST /hooks`. */
  secretHeader?: string;
  /** `--authenticated-upstream`: run without a secret; something in front authenticates every call. */
  authenticatedUpstream?: boolean;
  /** `--allow-from` (repeatable): source addresses or CIDR ranges allowed to call. */
  allowFrom?: string[];
  /** `--trusted-proxy` (repeatable): proxies whose X-Forwarded-For names the caller. */
  trustedProxy?: string[];
  /** `--max-calls-per-second`: cap per source address. */
  maxCallsPerSecond?: string;
}

/** Collects a repeatable flag whose values may also be comma-separated. */
export function collectList(value: string, previous: string[] = []): string[] {
  return [
    ...previous,
    ...value
      .split(',')
      .map((v) => v.trim())
      .filter((v) => v !== ''),
  ];
}

/**
 * `loyalty-etl webhook --port P`: receives the loyalty webhook into `loyalty_events` (DuckDB: through the spool
 * each run ingests) until interrupted. Every
 * call must carry the receiver's secret (`LOYALTY_WEBHOOK_SECRET`, and `LOYALTY_WEBHOOK_SECRET_PREVIOUS` during
 * a rotation) unless `--authenticated-upstream` says something in front checks callers. Every call let in is
 * stored (or found stored) before it is answered 200; `_run_id` of its rows is this receiver's id.
 */
export async function webhookCommand(options: WebhookCommandOptions): Promise<void> {
  const port = Number(options.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    throw new CommandError(`--port: ${options.port} is not a whole number from 0 to 65535`, ExitCode.usage);
  const gateOptions = resolveGateOptions(options);
  const config = loadConfig(options.config ?? 'jobs.yaml');
  for (const secret of [...config.secrets, ...gateOptions.secrets]) registerSecret(secret);
  const logger = commandLogger();
  if (gateOptions.secrets.length === 0) {
    logger.warn(
      { authenticatedUpstream: true },
      `webhook receiver runs without a secret (--authenticated-upstream): it stores every call that reaches it, so only an authenticating proxy or gateway may reach it`,
    );
  }
  const receiverId = randomUUID();
  const store = archivingEvents(
    eventStoreFor(config.destination, { runId: receiverId }),
    createArchive(config),
    receiverId,
  );
  const warehouse = await store.check(); // the config and the warehouse are sound before the first call
  const receiver = await startWebhookReceiver({
    ...gateOptions,
    store,
    timezone: config.source.timezone,
    host: options.host,
    port,
    logger,
  });
  const address =
    gateOptions.secrets.length > 0
      ? `${HOOKS_PATH}/<secret>${gateOptions.secretHeader ? ` or ${HOOKS_PATH} with header ${gateOptions.secretHeader}` : ''}`
      : `${HOOKS_PATH} (no secret)`;
  logger.info(
    {
      url: receiver.url,
      receiverId,
      warehouse,
      secrets: gateOptions.secrets.length,
      secretHeader: gateOptions.secretHeader,
      allowFrom: gateOptions.allowFrom,
      trustedProxies: gateOptions.trustedProxies,
      maxCallsPerSecond: gateOptions.rateLimit?.calls,
    },
    'webhook receiver listening',
  );
  process.stdout.write(
    `webhook receiver listening on ${receiver.url}: POST ${address}; storing into ${warehouse}; receiver ${receiverId}\n`,
  );
  await new Promise<void>((resolve) => {
    const stop = () => resolve();
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
  await receiver.close();
  const s = receiver.stats();
  process.stdout.write(
    `webhook receiver stopped: ${s.stored} stored, ${s.duplicates} duplicates, ${s.invalid} invalid, ${s.quarantined} quarantined, ${s.failed} not stored (answered 503), ${s.refused} refused, ${s.limited} over the cap\n`,
  );
}

/**
 * Where the receiver stores events: for a DuckDB warehouse, its spool (`destination.event_spool`), which each run
 * ingests, so the receiver never needs the file a run holds; PostgreSQL takes every event directly.
 */
export function eventStoreFor(
  destination: DestinationSettings,
  options: { runId: string; now?: () => Date },
): EventStore & { check(): Promise<string> } {
  const spool = eventSpoolOf(destination);
  return spool === undefined
    ? new WarehouseEventStore(destination, options)
    : new SpoolEventStore(new EventSpool(spool), options);
}

/**
 * The store, each event first kept in the raw archive (`destination.archive`), durably, so that an event stored
 * is an event kept; the store as it is when the archive is off.
 */
function archivingEvents(
  store: EventStore & { check(): Promise<string> },
  archive: AnswerArchive | undefined,
  receiverId: string,
): EventStore & { check(): Promise<string> } {
  if (!archive) return store;
  const events = new EventArchive(archive.root, receiverId);
  return {
    check: () => store.check(),
    save: async (event, receivedAt = new Date()) => {
      // one instant for both: the row's received_at is the one kept, so a replay gives the row back as it was
      await events.keep(HOOKS_PATH, event, receivedAt.toISOString());
      return store.save(event, receivedAt);
    },
    close: async () => {
      await events.close();
      await store.close();
    },
  };
}

/** The flags and the environment as gate options, checked before anything starts: a mistake is exit 2. */
function resolveGateOptions(options: WebhookCommandOptions): WebhookGateOptions {
  let secrets: string[];
  try {
    secrets = readReceiverSecrets();
  } catch (error) {
    if (error instanceof ReceiverSecretError) throw new CommandError(`webhook: ${error.message}`, ExitCode.usage);
    throw error;
  }
  if (secrets.length === 0 && !options.authenticatedUpstream) {
    throw new CommandError(
      `webhook: ${WEBHOOK_SECRET_ENV} is not set; set it (e.g. openssl rand -hex 32) and register https://<host>${HOOKS_PATH}/<secret> with the service, or pass --authenticated-upstream if a proxy in front authenticates every call`,
      ExitCode.usage,
    );
  }
  const gate: WebhookGateOptions = {
    secrets,
    authenticatedUpstream: options.authenticatedUpstream === true,
    ...(options.secretHeader !== undefined ? { secretHeader: options.secretHeader } : {}),
    ...(options.allowFrom?.length ? { allowFrom: options.allowFrom } : {}),
    ...(options.trustedProxy?.length ? { trustedProxies: options.trustedProxy } : {}),
  };
  if (options.maxCallsPerSecond !== undefined) {
    if (!/^[1-9]\d*$/.test(options.maxCallsPerSecond))
      throw new CommandError(
        `webhook: --max-calls-per-second: ${options.maxCallsPerSecond} is not a whole number of at least 1`,
        ExitCode.usage,
      );
    gate.rateLimit = { calls: Number(options.maxCallsPerSecond) };
  }
  try {
    new WebhookGate(gate); // every flag is checked here, before the warehouse is opened
  } catch (error) {
    if (error instanceof WebhookGateOptionError)
      throw new CommandError(`webhook: --${error.option}: ${error.problem}`, ExitCode.usage);
    throw error;
  }
  return gate;
}

/** `loyalty-etl webhook` and its flags. */
export function registerWebhook(program: Command): void {
  program
    .command('webhook')
    .description('receive the loyalty webhook into the loyalty_events table (for postings.customers: webhook)')
    .option('-c, --config <file>', 'the jobs file', 'jobs.yaml')
    .option('--port <n>', 'port (0 picks a free one)', '8788')
    .option('--host <host>', 'address to listen on', '127.0.0.1')
    .option('--secret-header <name>', 'also take the secret (LOYALTY_WEBHOOK_SECRET) in this header, on POST /hooks')
    .option('--authenticated-upstream', 'run without a secret: a proxy or gateway in front authenticates every call')
    .option('--allow-from <cidr>', 'only these source addresses or CIDR ranges may call (repeatable)', collectList)
    .option('--trusted-proxy <cidr>', "believe this proxy's X-Forwarded-For about the caller (repeatable)", collectList)
    .option('--max-calls-per-second <n>', 'cap on calls per source address; beyond it, 429 with Retry-After')
    .action(webhookCommand);
}
