import { warehouseOf } from '../load/warehouses.js';
import { lastClosedDay } from '../plan/days.js';
import { resolveJob, commandLogger, createApi, usingDestination, type CommonOptions } from './job-session.js';
import type { Command } from 'commander';
import { withJobFlags } from './shared-flags.js';
import { integrationLine, integrationSeen } from './integration-line.js';
import { recordIntegrationSeen } from '../state/integrations.js';

/**
 * `loyalty-etl check`: the config is valid (loading it proves that), the source answers one cheap call with
 * the configured credentials, and the warehouse opens and is migrated. It never creates a warehouse: a missing one
 * is an error naming it.
 */
export async function checkCommand(options: CommonOptions): Promise<void> {
  const { config, job, jobConfig } = resolveJob(options);
  const out = (line: string) => process.stdout.write(`${line}\n`);
  out(
    `config ok: ${config.file}, job ${job} (${jobConfig.streams.join(', ')}; ${jobConfig.window_days}-day windows from ${jobConfig.first_day})`,
  );
  const api = createApi(
    { ...config, source: { ...config.source, retries: Math.min(config.source.retries, 1) } },
    commandLogger(),
  );
  const profiles = await api.profiles();
  out(
    `source ok: ${config.source.base_url} answered (${profiles.length} profiles); last closed day in ${config.source.timezone} is ${lastClosedDay(config.source.timezone)}; requests paced at ${config.source.requests_per_second} a second, ${config.source.concurrency} in flight`,
  );
  const integration = await integrationSeen(api, config);
  if (integration) out(integrationLine(integration));
  const { description, warnings } = await usingDestination(
    config,
    async (destination) => {
      await destination.withConnection((conn) => conn.all('SELECT 1 AS ok'));
      if (integration?.id != null) {
        const id = integration.id;
        await destination.withConnection((conn) =>
          recordIntegrationSeen(conn, {
            integrationId: id,
            title: integration.title,
            shopDomain: integration.shopDomain,
            clientTitle: integration.clientTitle,
            createdAt: integration.created,
            lastSeenAt: new Date().toISOString(),
          }),
        );
      }
      const warnings = await warehouseOf(config.destination).checks(destination);
      return { description: destination.describe(), warnings };
    },
    { create: false },
  );
  out(`warehouse ok: ${description}`);
  for (const line of warnings) out(line);
}

/** `loyalty-etl check` and its flags. */
export function registerCheck(program: Command): void {
  withJobFlags(program.command('check').description('validate the config, reach the source and the warehouse')).action(
    checkCommand,
  );
}
