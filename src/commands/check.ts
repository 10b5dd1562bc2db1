import { excessPowers, readRolePowers, type RolePowers } from '../load/postgres/role-powers.js';
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
  const { description, powers } = await usingDestination(
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
      const powers =
        config.destination.type === 'postgres'
          ? await destination.withConnection((conn) =>
              readRolePowers((sql, params) => conn.all(sql, params), destination.schema),
            )
          : undefined;
      return { description: destination.describe(), powers };
    },
    { create: false },
  );
  out(`warehouse ok: ${description}`);
  if (powers) for (const line of roleWarnings(powers)) out(line);
}

/**
 * Warnings about the pipeline's PostgreSQL role: powers beyond its schema, which a shared warehouse should not
 * hand out, and that `sql` with this jobs file would give an analyst a role that writes.
 */
function roleWarnings(powers: RolePowers): string[] {
  const lines = excessPowers(powers, false).map(
    (p) =>
      `warning: the warehouse role ${powers.role} ${p}; the pipeline needs only to own its schema (docs/operations.md, "Roles")`,
  );
  if (powers.writes || powers.superuser)
    lines.push(
      `warning: loyalty-etl sql with this jobs file connects as ${powers.role}, which can write: analysts need a read-only role of their own (sql --warehouse postgres://analyst@…; docs/operations.md, "Roles")`,
    );
  return lines;
}

/** `loyalty-etl check` and its flags. */
export function registerCheck(program: Command): void {
  withJobFlags(program.command('check').description('validate the config, reach the source and the warehouse')).action(
    checkCommand,
  );
}
