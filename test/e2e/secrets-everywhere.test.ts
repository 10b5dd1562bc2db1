import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator, type Emulator } from '../../src/emulator/index.js';
import { qualified } from '../../src/load/warehouse/identifiers.js';
import type { DestinationSettings } from '../../src/plan/job-plan.js';
import { emulatorJobs, runCli, type CliResult } from '../helpers/cli.js';
import { testDestinations } from '../helpers/destinations.js';
import { testTempDir } from '../helpers/temp-dir.js';
import { withWarehouse } from '../helpers/warehouse-reader.js';

const TZ = 'Europe/Athens';
const START = '2024-02-01';
const END = '2024-02-06';

/** One distinctive value for each place a credential enters; none may come out anywhere. */
const SECRETS = {
  token: 'tok-Qz81vK-secret',
  warehousePassword: 'pw-Qz81vK-secret',
  urlPassword: 'url-Qz81vK-secret',
  salt: 'salt-Qz81vK-secret',
};

/** Every form a secret could be written in: as it is, URL-encoded, JSON-escaped. */
function forms(secret: string): string[] {
  return [secret, encodeURIComponent(secret), JSON.stringify(secret).slice(1, -1)];
}

/** Every file under `dir` as text, gzip members unpacked. */
function filesUnder(dir: string): Array<[string, string]> {
  if (!existsSync(dir)) return [];
  const out: Array<[string, string]> = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...filesUnder(path));
    else {
      const bytes = readFileSync(path);
      out.push([path, name.endsWith('.gz') ? gunzipSync(bytes).toString('utf8') : bytes.toString('latin1')]);
    }
  }
  return out;
}

/** Every value of every table of the warehouse, the pipeline's own included, as one text. */
async function everyValue(config: DestinationSettings): Promise<string> {
  return withWarehouse(config, async (conn, destination) => {
    const tables = await conn.all<{ table_name: string }>(
      `SELECT table_name FROM information_schema.tables WHERE table_schema = $1 AND table_type = 'BASE TABLE'`,
      [destination.schema],
    );
    const text = destination.name === 'duckdb' ? 'VARCHAR' : 'TEXT';
    const parts: string[] = [];
    for (const { table_name } of tables) {
      const rows = await conn.all<{ t: string }>(
        `SELECT CAST(r AS ${text}) AS t FROM ${qualified(destination.schema, table_name)} r`,
      );
      parts.push(`${table_name}: ${rows.map((r) => r.t).join('\n')}`);
    }
    return parts.join('\n');
  });
}

function expectNoSecret(where: string, text: string): void {
  for (const [name, secret] of Object.entries(SECRETS))
    for (const form of forms(secret)) expect(text.includes(form), `${name} found in ${where}`).toBe(false);
}

describe.each(testDestinations)('credentials never leave the config, on $name', (target) => {
  let emulator: Emulator;
  beforeAll(async () => {
    emulator = await startEmulator({
      seed: 9,
      accounts: 40,
      startDate: START,
      endDate: END,
      timezone: TZ,
      auth: { header: 'X-Api-Key', value: SECRETS.token },
    });
  });
  afterAll(() => emulator.close());

  it('no output holds any of them: logs, errors, tables, status, the page, the copy, the archive', async () => {
    const dir = testTempDir('secrets-');
    const fresh = await target.fresh();
    const archive = join(dir, 'archive');
    const config: DestinationSettings =
      fresh.config.type === 'postgres'
        ? {
            ...fresh.config,
            // the shared server trusts its clients: the password travels, and is not needed
            url: fresh.config.url.replace('postgres@', `postgres:${SECRETS.warehousePassword}@`),
            archive: { path: archive },
          }
        : { ...fresh.config, archive: { path: archive } };
    const file = emulatorJobs({
      url: emulator.url,
      timezone: TZ,
      firstDay: START,
      destination: config,
      streams: ['accounts', 'surveys', 'loyalty_postings'],
      sourceKeys: { retries: 0 },
      extraSource: `  auth:\n    header: X-Api-Key\n    token: \${LOYALTY_API_TOKEN}`,
    });
    const env = { LOYALTY_API_TOKEN: SECRETS.token, LOYALTY_PII_SALT: SECRETS.salt };
    const outputs: Array<[string, CliResult]> = [];

    // a night of failures, whose errors are stored, then a good one
    emulator.faults.set({ serverErrorRate: 0.4 });
    outputs.push(['failing run', await runCli(['run', '--config', file, '--until', END], env)]);
    emulator.faults.set({});
    outputs.push(['run', await runCli(['run', '--config', file, '--until', END], env)]);
    expect(outputs[0]![1].code, outputs[0]![1].stderr).toBe(1);
    expect(outputs[1]![1].code, outputs[1]![1].stderr).toBe(0);
    outputs.push(['status', await runCli(['status', '--config', file], env)]);
    outputs.push(['status --json', await runCli(['status', '--config', file, '--json'], env)]);
    const page = join(dir, 'report.html');
    outputs.push(['report', await runCli(['report', '--config', file, '--output', page, '--reject-payloads'], env)]);
    outputs.push(['check', await runCli(['check', '--config', file], env)]);
    // a refused credential, and a service URL carrying a user and password: refused before anything is sent
    outputs.push([
      'refused token',
      await runCli(['run', '--config', file, '--until', END], { ...env, LOYALTY_API_TOKEN: 'tok-wrong' }),
    ]);
    const withUserinfo = await runCli(['run', '--config', file], {
      ...env,
      LOYALTY_API_URL: emulator.url.replace('http://', `http://etl:${SECRETS.urlPassword}@`),
    });
    expect(withUserinfo.code, withUserinfo.stderr).toBe(2);
    outputs.push(['service URL with a password', withUserinfo]);

    for (const [command, result] of outputs) {
      expectNoSecret(`${command}: stdout`, result.stdout);
      expectNoSecret(`${command}: stderr`, result.stderr);
    }
    expectNoSecret('the warehouse', await everyValue(fresh.config));
    expectNoSecret('the status page', readFileSync(page, 'utf8'));
    const archived = filesUnder(archive);
    expect(archived.length).toBeGreaterThan(0);
    for (const [path, text] of archived) expectNoSecret(path, text);
    if (config.type === 'duckdb') {
      const copy = config.path.replace(/\.duckdb$/, '.published.duckdb');
      expect(existsSync(copy)).toBe(true);
      expectNoSecret('the published copy', readFileSync(copy).toString('latin1'));
    }
  }, 180_000);
});
