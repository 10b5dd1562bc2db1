import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { testTempDir } from '../helpers/temp-dir.js';

describe('the demo', () => {
  it('loads the emulated program, and a second run loads nothing new', async () => {
    const cwd = testTempDir('demo-');
    const first = await runCli(['demo'], {}, cwd);
    expect(first.code, first.stderr.slice(-800)).toBe(0);
    expect(first.stdout).toMatch(/^accounts: \d+ window\(s\), \d+ records read/m);
    expect(first.stdout).toMatch(/^ {2}accounts +3000 rows$/m);
    // the loyalty state of every customer, and the finance query on it: liability per currency, points expiring soon
    expect(first.stdout).toMatch(/^ {2}loyalty_status +3000 rows$/m);
    expect(first.stdout).toMatch(/^finance query:$/m);
    expect(first.stdout).toMatch(/^liability +EUR +\d+ +\d+\.\d+ +\d+\.\d+/m);
    expect(first.stdout).toMatch(/^expiring in 30 days +NULL +\d+ +\d+\.\d+ +NULL/m);
    // the emulated program starts on the demo's first day: no directory before it to sweep
    expect(first.stdout).not.toMatch(/customer directory/);
    // it points at a SQL prompt the project installs, on the copy it published for analysts
    expect(first.stdout).toMatch(/^query it yourself: npx loyalty-etl sql --warehouse \.\/warehouse\.published\.duckdb /m);
    const query = await runCli(['sql', '--warehouse', './warehouse.published.duckdb', '--csv', 'SELECT COUNT(*) AS customers FROM accounts'], {}, cwd);
    expect([query.code, query.stdout]).toEqual([0, 'customers\n3000\n']);
    const second = await runCli(['demo'], {}, cwd);
    expect(second.code, second.stderr.slice(-800)).toBe(0);
    expect(second.stdout).toMatch(/^nothing to load: every window is up to date$/m);
    expect(second.stdout).toMatch(/^0 source requests/m);
    expect(second.stdout).toMatch(/^ {2}accounts +3000 rows$/m);
  }, 180_000);
});
