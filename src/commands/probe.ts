import type { Command } from 'commander';
import { CommandError, ExitCode } from './exit-codes.js';
import { isoDay } from '../config/config-schema.js';
import { lastClosedDay } from '../plan/days.js';
import { commandLogger, createApi, resolveJob, type CommonOptions } from './job-session.js';
import { PROBE_BUDGET, ServiceProbe, type Finding, type ProbeSettings } from './probe-service.js';
import { withJobFlags } from './shared-flags.js';
import { integrationLine, integrationSeen } from './integration-line.js';
import { table } from './table.js';

export interface ProbeOptions extends CommonOptions {
  json?: boolean;
  /** The last day to look at instead of the last closed day in the source's zone. */
  until?: string;
}

/**
 * `loyalty-etl probe`: first contact with a service. It looks, read-only and in at most {@link PROBE_BUDGET}
 * requests at the configured pace, at how the service reads each convention the spec leaves open, and prints each
 * finding beside what the config says, with the `jobs.yaml` lines that would make them agree. Exit 0 when they
 * agree, 7 when they do not; a finding it cannot make is said as such, never guessed.
 */
export async function probeCommand(options: ProbeOptions): Promise<void> {
  const { config, jobConfig } = resolveJob(options);
  if (options.until !== undefined && !isoDay.safeParse(options.until).success)
    throw new CommandError(`--until: ${options.until} is not a day YYYY-MM-DD`, ExitCode.usage);
  const { source } = config;
  const settings: ProbeSettings = {
    through: options.until ?? lastClosedDay(source.timezone),
    from: jobConfig.first_day < source.history_start ? jobConfig.first_day : source.history_start,
    timezone: source.timezone,
    pageSize: source.page_size,
    exportEnd: source.export_end,
    firstPage: source.first_page,
    multipleChoice: source.multiple_choice,
  };
  // each request is one look: a retry would spend the budget on the same answer
  const api = createApi({ ...config, source: { ...source, retries: 0 } }, commandLogger());
  const probe = new ServiceProbe(api, settings);
  const findings = await probe.run();
  const integration = await integrationSeen(api, config);
  const differs = findings.filter((f) => f.verdict === 'differs');
  const untold = notTold(findings);
  if (options.json) {
    const out = {
      source: source.base_url,
      through: settings.through,
      requests: probe.requestCount,
      agree: differs.length === 0 && untold.length === 0,
      unsettled: findings.filter((f) => f.verdict === 'unsettled').length,
      ...(integration ? { integration } : {}),
      findings,
    };
    process.stdout.write(`${JSON.stringify(out, null, 2)}\n`);
  } else
    process.stdout.write(
      `${integration ? `${integrationLine(integration)}\n` : ''}${formatProbe(findings, source.base_url, settings, probe.requestCount)}`,
    );
  if (differs.length > 0)
    throw new CommandError(
      `probe: the config and the service disagree on ${differs.map((f) => f.name).join(', ')} (set the jobs.yaml lines printed above)`,
      ExitCode.probeDisagrees,
    );
  if (untold.length > 0)
    throw new CommandError(
      `probe: could not tell ${untold.map((f) => f.name).join(', ')} (${untold.map((f) => f.service).join('; ')}): the config is not checked against the service there`,
      ExitCode.probeCouldNotTell,
    );
}

/** Findings of a `jobs.yaml` key the probe could not make (or whose requests ran out): the config is unchecked there. */
function notTold(findings: Finding[]): Finding[] {
  return findings.filter((f) => f.verdict === 'unsettled' && (f.config !== null || f.name === 'the rest'));
}

/** The findings as a table, then the lines to set. */
export function formatProbe(findings: Finding[], baseUrl: string, settings: ProbeSettings, requests: number): string {
  const lines = [
    `probe of ${baseUrl}: ${requests} requests, days through ${settings.through} in ${settings.timezone}`,
    '',
    table(
      ['finding', 'config', 'verdict', 'service'],
      findings.map((f) => [f.name, f.config ?? '-', f.verdict, f.service]),
    ),
  ];
  const set = findings.filter((f) => f.verdict === 'differs').flatMap((f) => f.set ?? []);
  const keys = set.filter((l) => !l.startsWith('#'));
  const notes = set.filter((l) => l.startsWith('#'));
  if (keys.length > 0) lines.push('', 'set in jobs.yaml:', 'source:', ...keys.map((l) => `  ${l}`));
  if (notes.length > 0) lines.push('', ...notes);
  const unsettled = findings.filter((f) => f.verdict === 'unsettled').length;
  const settled = findings.filter((f) => f.verdict === 'agrees' || f.verdict === 'differs').length;
  const untold = notTold(findings);
  if (unsettled > 0)
    lines.push('', `${unsettled} finding(s) could not be made (no data where it looked, or its requests ran out)`);
  if (findings.some((f) => f.verdict === 'differs')) return `${lines.join('\n')}\n`;
  if (untold.length > 0)
    lines.push(
      `could not tell ${untold.map((f) => f.name).join(', ')}: the config is not checked against the service there` +
        (settled > 0 ? `; the ${settled} other finding(s) of a jobs.yaml key match it` : ''),
    );
  else lines.push('', `the config and the service agree on every finding of a jobs.yaml key (${settled})`);
  return `${lines.join('\n')}\n`;
}

/** `loyalty-etl probe` and its flags. */
export function registerProbe(program: Command): void {
  withJobFlags(
    program
      .command('probe')
      .description(
        `first contact with a service: how it reads what the spec leaves open, beside the config (read-only, at most ${PROBE_BUDGET} requests)`,
      ),
  )
    .option(
      '--until <day>',
      'the last day to look at instead of the last closed day (it looks at the 30 days up to it, or further back when they hold nothing)',
    )
    .option('--json', 'machine-readable output')
    .action(probeCommand);
}
