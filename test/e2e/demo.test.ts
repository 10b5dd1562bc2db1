import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { testTempDir } from '../helpers/temp-dir.js';

/** A count grouped in thousands, followed by what it counts. */
const counted = (n: string, what: string) => new RegExp(`^ {2}\\S+ +${n} ${what}$`, 'm');

describe('the demo', () => {
  it('loads its own warehouse, leaves jobs.yaml and ./warehouse.duckdb alone, and a second run loads nothing', async () => {
    const cwd = testTempDir('demo-');
    // a user's own files, where the demo runs: neither may change
    const jobs = 'jobs:\n  nightly: {}\n';
    const warehouse = 'the nightly warehouse';
    writeFileSync(join(cwd, 'jobs.yaml'), jobs);
    writeFileSync(join(cwd, 'warehouse.duckdb'), warehouse);
    const mtime = statSync(join(cwd, 'warehouse.duckdb')).mtimeMs;
    // the logs' default level: the summary must read on its own
    const env = { LOYALTY_LOG_LEVEL: undefined };

    const first = await runCli(['demo'], env, cwd);
    expect(first.code, first.stderr.slice(-800)).toBe(0);
    expect(first.stderr).toBe('');
    expect(first.stdout).not.toMatch(/"level"|"msg"/);
    expect(first.stdout).toMatch(/^loading it into \.\/demo\.duckdb /m);
    expect(first.stdout).toMatch(/^ {2}accounts +5,314 account versions in 13 weekly windows$/m);
    expect(first.stdout).toMatch(counted('3,000', 'customers'));
    expect(first.stdout).toMatch(counted('65', 'windows loaded'));
    // the loyalty state of every customer, and the finance query on it: liability per currency, points expiring soon
    expect(first.stdout).toMatch(counted('3,000', 'customer loyalty states'));
    expect(first.stdout).toMatch(/^finance query:$/m);
    expect(first.stdout).toMatch(/^liability +EUR +\d+ +\d+\.\d+ +\d+\.\d+/m);
    expect(first.stdout).toMatch(/^expiring in 30 days +NULL +\d+ +\d+\.\d+ +NULL/m);
    // the emulated program starts on the demo's first day: no directory before it to sweep
    expect(first.stdout).not.toMatch(/customer directory/);
    expect(first.stdout).toMatch(/^status page: \.\/demo-report\.html /m);
    // it points at the SQL prompt on the copy it published for analysts
    expect(first.stdout).toMatch(/^query it yourself: \S.* sql --warehouse \.\/demo\.published\.duckdb /m);
    const query = await runCli(
      ['sql', '--warehouse', './demo.published.duckdb', '--csv', 'SELECT COUNT(*) AS customers FROM accounts'],
      {},
      cwd,
    );
    expect([query.code, query.stdout]).toEqual([0, 'customers\n3000\n']);

    const second = await runCli(['demo'], env, cwd);
    expect(second.code, second.stderr.slice(-800)).toBe(0);
    expect(second.stderr).toBe('');
    expect(second.stdout).toMatch(
      /^this run: nothing new to load, every window through 2025-03-31 is loaded already \(0 requests to the service\)$/m,
    );
    expect(second.stdout).toMatch(counted('3,000', 'customers'));

    expect(readFileSync(join(cwd, 'jobs.yaml'), 'utf8')).toBe(jobs);
    expect(readFileSync(join(cwd, 'warehouse.duckdb'), 'utf8')).toBe(warehouse);
    expect(statSync(join(cwd, 'warehouse.duckdb')).mtimeMs).toBe(mtime);
  }, 180_000);
});
