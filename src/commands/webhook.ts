import { randomUUID } from 'node:crypto';
import { CommandError, ExitCode } from '../cli/exit-codes.js';
import { loadConfig } from '../config/load-config.js';
import { registerSecret } from '../log/redact.js';
import { WarehouseEventStore } from '../webhook/loyalty-event-store.js';
import { startWebhookReceiver } from '../webhook/webhook-receiver.js';
import { commandLogger } from './job-session.js';

export interface WebhookCommandOptions {
  port: string;
  host: string;
  config?: string;
}

/**
 * `loyalty-etl webhook --port P`: receives the loyalty webhook into `loyalty_events` until interrupted. Every
 * call is stored (or found stored) before it is answered 200; `_run_id` of its rows is this receiver's id.
 */
export async function webhookCommand(options: WebhookCommandOptions): Promise<void> {
  const port = Number(options.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new CommandError(`--port: ${options.port} is not a whole number from 0 to 65535`, ExitCode.usage);
  const config = loadConfig(options.config ?? 'jobs.yaml');
  for (const secret of config.secrets) registerSecret(secret);
  const logger = commandLogger();
  const receiverId = randomUUID();
  const store = new WarehouseEventStore(config.destination, { runId: receiverId });
  const warehouse = await store.check(); // the config and the warehouse are sound before the first call
  const receiver = await startWebhookReceiver({ store, timezone: config.source.timezone, host: options.host, port, logger });
  logger.info({ url: receiver.url, receiverId, warehouse }, 'webhook receiver listening');
  process.stdout.write(`webhook receiver listening on ${receiver.url} (any path), storing into ${warehouse}; receiver ${receiverId}\n`);
  await new Promise<void>((resolve) => {
    const stop = () => resolve();
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
  await receiver.close();
  const s = receiver.stats();
  process.stdout.write(`webhook receiver stopped: ${s.stored} stored, ${s.duplicates} duplicates, ${s.invalid} invalid, ${s.failed} not stored (answered 503)\n`);
}
