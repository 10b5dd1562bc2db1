import { execFile } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startEmulator, type Emulator } from '../../src/emulator/index.js';
import { testTempDir } from '../helpers/temp-dir.js';

const ROOT = resolve(import.meta.dirname, '../..');
const DOC = readFileSync(join(ROOT, 'docs/scheduling.md'), 'utf8');

/** The first fenced block of `lang` after `heading` in docs/scheduling.md. */
function block(lang: string, after: string): string {
  const from = DOC.indexOf(after);
  const match = new RegExp('```' + lang + '\\n([\\s\\S]*?)```').exec(DOC.slice(from));
  if (from < 0 || !match) throw new Error(`no ${lang} block after ${after} in docs/scheduling.md`);
  return match[1]!;
}

/**
 * The cron line and the environment file of docs/scheduling.md, run as written by `sh` (as cron runs it): only the
 * paths are this machine's, the service is the emulator, and `mail` writes a file.
 */
async function cronNight(emulatorUrl: string): Promise<{ dir: string; mailed: () => string | undefined }> {
  const dir = testTempDir('cron-');
  const env = block('sh', '## The environment file')
    .replace(/^LOYALTY_API_URL=.*$/m, `LOYALTY_API_URL=${emulatorUrl}`)
    .replace(/^LOYALTY_WAREHOUSE=.*$/m, `LOYALTY_WAREHOUSE=${join(dir, 'warehouse.duckdb')}`);
  writeFileSync(join(dir, 'loyalty-etl.env'), env);
  const line = block('cron', '**cron**')
    .split('\n')
    .find((l) => /^\d/.test(l))!
    .replace(/^(\S+\s+){5}/, '')
    .replace('cd /opt/loyalty-etl', `cd ${ROOT}`)
    .replace('/etc/loyalty-etl.env', join(dir, 'loyalty-etl.env'))
    .replace('node bin/loyalty-etl.js', `${process.execPath} ${inject('cliEntry')}`)
    .replace('/srv/www/loyalty-etl.html', join(dir, 'status.html'))
    .replace('/var/log/loyalty-etl.log', join(dir, 'loyalty-etl.log'))
    .replace(/mail -s "[^"]*" \S+/, `cat > ${join(dir, 'mail.txt')}`);
  // cron's environment: none of the test's LOYALTY_* variables
  const clean = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('LOYALTY_')));
  await promisify(execFile)('/bin/sh', ['-c', line], { env: clean });
  const mail = join(dir, 'mail.txt');
  return { dir, mailed: () => (existsSync(mail) ? readFileSync(mail, 'utf8') : undefined) };
}

describe('docs/scheduling.md as written: the environment file and the cron line', () => {
  let emulator: Emulator;
  beforeAll(async () => {
    emulator = await startEmulator({ seed: 8, accounts: 20, timezone: 'Europe/Athens' });
  });
  afterAll(() => emulator.close());

  it('a night: the file reaches the command (no variable left undocumented or unset), nothing is mailed', async () => {
    const { dir, mailed } = await cronNight(emulator.url);
    expect(mailed()).toBeUndefined();
    const log = readFileSync(join(dir, 'loyalty-etl.log'), 'utf8');
    expect(log).toMatch(/"msg":"run finished"/);
    expect(existsSync(join(dir, 'warehouse.duckdb'))).toBe(true);
    expect(existsSync(join(dir, 'status.html'))).toBe(true);
  });

  it('a failed night is mailed with its exit code', async () => {
    const gone = await startEmulator({ seed: 8, accounts: 20 });
    const url = gone.url;
    await gone.close();
    const { mailed } = await cronNight(url);
    expect(mailed()).toBe('loyalty-etl run exited 1\n');
  });
});
