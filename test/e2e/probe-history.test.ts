import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator, type Emulator } from '../../src/emulator/index.js';
import type { Finding } from '../../src/commands/probe-finding.js';
import { emulatorJobs, runCli } from '../helpers/cli.js';

const TZ = 'Europe/Athens';
/** A service whose data ends months before today: the 30 days before today hold nothing. */
const START = '2024-03-01';
const END = '2024-05-31';

describe('probe against a service whose data ends months before today', () => {
  let emulator: Emulator;
  beforeAll(async () => {
    emulator = await startEmulator({ seed: 3, accounts: 60, startDate: START, endDate: END, timezone: TZ });
  });
  afterAll(() => emulator.close());

  async function probe(historyStart: string, json = true) {
    const file = emulatorJobs({
      url: emulator.url,
      timezone: TZ,
      firstDay: historyStart,
      historyStart,
      sourceKeys: { requests_per_second: 200 },
    });
    const cli = await runCli(['probe', '--config', file, ...(json ? ['--json'] : [])]);
    const out = json && cli.stdout ? (JSON.parse(cli.stdout) as { requests: number; findings: Finding[] }) : undefined;
    return { cli, out, finding: (name: string) => out?.findings.find((f) => f.name === name) };
  }

  it('looks further back, to the last days holding data, and settles the findings there: exit 0', async () => {
    const { cli, out, finding } = await probe(START);
    expect(cli.code, cli.stderr).toBe(0);
    expect(finding('days looked at')?.service).toMatch(
      /^2024-05-0[12]\.\.2024-05-3[01]: the 30 days through \d{4}-\d\d-\d\d hold no survey answers; the last day with one is 2024-05-3[01]$/,
    );
    for (const name of ['first page number', 'export end day', 'page size', 'multiple-choice values'])
      expect(finding(name)?.verdict, name).toBe('agrees');
    expect(out!.requests).toBeLessThanOrEqual(100);
  });

  it('with no data from history_start on: says what it could not tell, never that the config agrees, exit 9', async () => {
    const { cli } = await probe('2024-07-01', false);
    expect(cli.code).toBe(9);
    expect(cli.stdout).toMatch(/^\d+ finding\(s\) could not be made/m);
    expect(cli.stdout).toMatch(
      /^could not tell first page number, export end day.*: the config is not checked against the service there/m,
    );
    expect(cli.stdout).not.toMatch(/the config and the service agree/);
    const lines = cli.stderr.trim().split('\n');
    expect(lines.at(-1)).toMatch(
      /^loyalty-etl: probe: could not tell first page number, export end day, .*: the config is not checked against the service there$/,
    );
  });
});
