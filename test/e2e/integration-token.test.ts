import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator, type Emulator } from '../../src/emulator/index.js';
import { emulatorJobs, runCli } from '../helpers/cli.js';
import { testDestinations } from '../helpers/destinations.js';
import { dumpTables } from '../helpers/table-dump.js';
import { withWarehouse } from '../helpers/warehouse-reader.js';

const TZ = 'Europe/Athens';
const START = '2024-05-01';
const END = '2024-05-10';
const TOKEN = 'integration-token-of-the-shop';

describe('the integration the credentials are', () => {
  let emulator: Emulator;
  /** The secrets the service sends with the integration: none may reach any output. */
  let secrets: string[];
  beforeAll(async () => {
    emulator = await startEmulator({
      seed: 2,
      accounts: 30,
      startDate: START,
      endDate: END,
      timezone: TZ,
      integrationCreated: 'Dec 31, 2023 11:59:59 PM',
    });
    const answer = (await (
      await fetch(`${emulator.url}/accounts/integrations`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ integrationToken: TOKEN }),
      })
    ).json()) as Record<string, string> & { onlineAPIClientDTO: Record<string, string> };
    secrets = [answer.apiKey!, answer.password!, answer.sharedSecret!, answer.onlineAPIClientDTO.apiToken!, TOKEN];
  });
  afterAll(() => emulator.close());

  async function jobsFile() {
    const { config } = await testDestinations[0]!.fresh();
    return emulatorJobs({ url: emulator.url, timezone: TZ, firstDay: START, destination: config });
  }

  it.each([
    ['check', []],
    ['probe', ['--until', END]],
    ['probe', ['--until', END, '--json']],
  ])('%s %j says its title, shop domain and created (in UTC), and none of its secrets', async (command, flags) => {
    const file = await jobsFile();
    if (command === 'check') expect((await runCli(['run', '--config', file, '--until', END])).code).toBe(0);
    const cli = await runCli([command, '--config', file, ...flags], { LOYALTY_INTEGRATION_TOKEN: TOKEN });
    expect([0, 9]).toContain(cli.code);
    if (flags.includes('--json'))
      expect(JSON.parse(cli.stdout).integration).toMatchObject({
        title: 'Online shop',
        shopDomain: 'shop.example.com',
        // 11:59:59 PM in Athens, two hours ahead of UTC in winter
        created: '2023-12-31T21:59:59.000Z',
        createdAsSent: 'Dec 31, 2023 11:59:59 PM',
      });
    else
      expect(cli.stdout).toMatch(
        /^integration: "Online shop" \(id 42\) on shop\.example\.com, created 2023-12-31T21:59:59\.000Z \(Dec 31, 2023 11:59:59 PM\)$/m,
      );
    for (const secret of secrets) expect(cli.stdout + cli.stderr).not.toContain(secret);
  });

  it.each(testDestinations)(
    'check records it in $name: status shows the last one seen; no table holds a secret',
    async (target) => {
      const { config } = await target.fresh();
      const file = emulatorJobs({ url: emulator.url, timezone: TZ, firstDay: START, destination: config });
      const env = { LOYALTY_INTEGRATION_TOKEN: TOKEN };
      expect((await runCli(['run', '--config', file, '--until', END], env)).code).toBe(0);
      expect((await runCli(['check', '--config', file], env)).code).toBe(0);
      const status = await runCli(['status', '--config', file], env);
      expect(status.stdout).toMatch(
        /^integration: "Online shop" \(id 42\) on shop\.example\.com, created 2023-12-31[ T]21:59:59(\.000)?(\+00|Z)?; last seen by check /m,
      );
      const json = await runCli(['status', '--config', file, '--json'], env);
      expect(JSON.parse(json.stdout).integration).toMatchObject({ integrationId: 42, shopDomain: 'shop.example.com' });
      for (const secret of secrets) expect(status.stdout + status.stderr + json.stdout).not.toContain(secret);
      await withWarehouse(config, async (conn) => {
        const dump = JSON.stringify([...(await dumpTables(conn, config.schema))]);
        expect(dump).toContain('shop.example.com');
        for (const secret of secrets) expect(dump).not.toContain(secret);
      });
    },
  );

  it('without a token, nothing is asked', async () => {
    const cli = await runCli(['check', '--config', await jobsFile()]);
    expect(cli.stdout).not.toMatch(/^integration:/m);
  });
});
