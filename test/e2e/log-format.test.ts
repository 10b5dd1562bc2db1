import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { inject } from 'vitest';
// every command as a process of its own: what a real process writes on its stdout and stderr is what this file checks
import { emulatorJobs, runCliProcess } from '../helpers/cli.js';
import { testDestinations } from '../helpers/destinations.js';
import { useEmulator } from '../helpers/suite-emulator.js';

const TZ = 'Europe/Athens';
const RANGE = { startDate: '2024-05-01', endDate: '2024-05-20' };
const VERSION = (
  JSON.parse(readFileSync(resolve(import.meta.dirname, '../../package.json'), 'utf8')) as { version: string }
).version;

/**
 * Runs the CLI on a pseudo-terminal (util-linux `script`), as a person at a terminal does: stdout and stderr are
 * both the terminal, so the text is what they see, in order.
 */
function onTerminal(
  args: string[],
  env: Record<string, string | undefined> = {},
): Promise<{ code: number | null; text: string }> {
  const line = [process.execPath, inject('cliEntry'), ...args].map((a) => `'${a.replaceAll("'", "'\\''")}'`).join(' ');
  const child = spawn('script', ['-qec', line, '/dev/null'], {
    env: { ...process.env, COLUMNS: '160', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let text = '';
  child.stdout.on('data', (d) => (text += d));
  child.stderr.on('data', (d) => (text += d));
  return new Promise((done) => child.on('close', (code) => done({ code, text })));
}

describe('the command line for a person and for a scheduler', () => {
  const emulator = useEmulator({ seed: 5, accounts: 40, ...RANGE, timezone: TZ, port: 0 });

  async function jobsFile(): Promise<string> {
    const { config } = await testDestinations[0]!.fresh();
    return emulatorJobs({
      url: emulator.url,
      timezone: TZ,
      firstDay: RANGE.startDate,
      destination: config,
      streams: ['accounts', 'surveys'],
    });
  }

  it('prints the version of package.json with --version', async () => {
    const result = await runCliProcess(['--version']);
    expect([result.code, result.stdout, result.stderr]).toEqual([0, `${VERSION}\n`, '']);
  });

  it('logs JSON lines when stderr is no terminal, and human lines with --log-format pretty', async () => {
    const json = await runCliProcess(['run', '--config', await jobsFile(), '--until', RANGE.endDate]);
    expect(json.code, json.stderr).toBe(0);
    const lines = json.stderr.trim().split('\n');
    expect(lines.length).toBeGreaterThan(3);
    for (const line of lines) expect(JSON.parse(line)).toHaveProperty('msg');

    const pretty = await runCliProcess([
      'run',
      '--config',
      await jobsFile(),
      '--until',
      RANGE.endDate,
      '--log-format',
      'pretty',
    ]);
    expect(pretty.code, pretty.stderr).toBe(0);
    expect(pretty.stderr).toMatch(/^\[\d\d:\d\d:\d\d\] INFO: run started \{.*"command":"run"/m);
    expect(pretty.stderr).not.toMatch(/^\{"level"/m);
    // no colour where nobody sees it
    expect(pretty.stderr).not.toContain('\u001b[');

    const wrong = await runCliProcess(['run', '--config', await jobsFile(), '--log-format', 'xml']);
    expect([wrong.code, wrong.stderr]).toEqual([
      2,
      "loyalty-etl: --log-format: 'xml' is no log format (use json or pretty)\n",
    ]);
  });

  it('on a terminal, shows a progress bar for run and no JSON; JSON again with --log-format json', async () => {
    const human = await onTerminal(['run', '--config', await jobsFile(), '--until', RANGE.endDate], {
      LOYALTY_LOG_LEVEL: undefined,
      NO_COLOR: '1',
    });
    expect(human.code, human.text).toBe(0);
    expect(human.text).toMatch(/run \[[█░]+\] 40\/40 windows \| [\d,]+ records \| [\d.]+ windows\/s \| ETA \S+/);
    expect(human.text).not.toMatch(/"level"/);
    expect(human.text).toMatch(/^accounts: 20 windows read/m);

    const machine = await onTerminal(
      ['run', '--config', await jobsFile(), '--until', RANGE.endDate, '--log-format', 'json'],
      { LOYALTY_LOG_LEVEL: 'info' },
    );
    expect(machine.code, machine.text).toBe(0);
    expect(machine.text).toMatch(/^\{"level":"info",.*"msg":"run started"\}/m);
    expect(machine.text).not.toMatch(/run \[/);
  });
});
