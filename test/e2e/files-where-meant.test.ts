import { execFileSync } from 'node:child_process';
import { lstatSync, readdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { publishPathOf } from '../../src/config/duckdb-files.js';
import { loadConfig } from '../../src/config/load-config.js';
import { openDestination } from '../../src/load/warehouses.js';
import { writeReport } from '../../src/report/write-report.js';
import { emulatorJobs, runCli } from '../helpers/cli.js';
import { duckdbTestDestination, testDestinations } from '../helpers/destinations.js';
import { testTempDir } from '../helpers/temp-dir.js';
import { useEmulator } from '../helpers/suite-emulator.js';

const TZ = 'UTC';
const mkfifo = (path: string) => execFileSync('mkfifo', [path]);

/** Runs `fn` with the process's umask set to `mask` (the commands it starts inherit it). */
async function underUmask<T>(mask: number, fn: () => Promise<T>): Promise<T> {
  const before = process.umask(mask);
  try {
    return await fn();
  } finally {
    process.umask(before);
  }
}

describe.each(testDestinations)('the status page goes only where it is meant to ($name)', (target) => {
  const emulator = useEmulator({
    seed: 4,
    accounts: 8,
    startDate: '2024-03-01',
    endDate: '2024-03-03',
    timezone: TZ,
  });

  it('never writes through a FIFO, a planted link or a link at the page’s path', async () => {
    const { config } = await target.fresh();
    const file = emulatorJobs({ url: emulator.url, timezone: TZ, firstDay: '2024-03-02', destination: config });
    expect((await runCli(['run', '--config', file, '--until', '2024-03-03'])).code).toBe(0);
    const dir = testTempDir('page-');

    const fifo = join(dir, 'page.fifo');
    mkfifo(fifo);
    const onFifo = await runCli(['report', '--config', file, '--output', fifo]);
    expect(onFifo.code).toBe(2);
    expect(onFifo.stderr).toBe(`loyalty-etl: --output: ${fifo} is a FIFO, not a regular file: it is left as it is\n`);
    expect(lstatSync(fifo).isFIFO()).toBe(true);

    // a link at the page's path, to a file of someone else's: neither the link nor its file is touched
    const victim = join(dir, 'victim.txt');
    writeFileSync(victim, 'not yours');
    const link = join(dir, 'page.html');
    symlinkSync(victim, link);
    const onLink = await runCli(['report', '--config', file, '--output', link]);
    expect(onLink.code).toBe(2);
    expect(onLink.stderr).toBe(
      `loyalty-etl: --output: ${link} is a symbolic link, not a regular file: it is left as it is\n`,
    );
    expect(lstatSync(link).isSymbolicLink()).toBe(true);
    expect(readFileSync(victim, 'utf8')).toBe('not yours');

    // links planted where a temporary file of a predictable name would go are never followed
    const page = join(dir, 'status.html');
    for (const name of [`${page}.${process.pid}.tmp`, `${page}.tmp`, `${page}.${process.pid}`])
      symlinkSync(victim, name);
    const destination = await openDestination(config);
    try {
      const jobConfig = loadConfig(file).jobs.nightly!;
      await writeReport(destination, { path: page, job: 'nightly', jobConfig, timezone: TZ, through: '2024-03-03' });
    } finally {
      await destination.close();
    }
    expect(readFileSync(victim, 'utf8')).toBe('not yours');
    const written = await runCli(['report', '--config', file, '--output', page]);
    expect(written.code, written.stderr).toBe(0);
    expect(readFileSync(page, 'utf8')).toMatch(/^<!doctype html>/);
    expect(readFileSync(victim, 'utf8')).toBe('not yours');
    expect(readdirSync(dir).filter((n) => n.startsWith('.'))).toEqual([]); // nothing of the write stays behind
  });
});

describe('the copy published for analysts goes only where it is meant to (DuckDB)', () => {
  const emulator = useEmulator({
    seed: 4,
    accounts: 8,
    startDate: '2024-03-01',
    endDate: '2024-03-03',
    timezone: TZ,
  });

  it('is no more readable than the warehouse: under umask 077 both are the owner’s alone', async () => {
    const { config, warehouse } = await duckdbTestDestination.empty();
    const file = emulatorJobs({ url: emulator.url, timezone: TZ, firstDay: '2024-03-02', destination: config });
    const run = await underUmask(0o077, () => runCli(['run', '--config', file, '--until', '2024-03-03']));
    expect(run.code, run.stderr).toBe(0);
    expect(statSync(warehouse).mode & 0o777).toBe(0o600);
    expect(statSync(publishPathOf(config)!).mode & 0o777).toBe(0o400);
  });

  it('never writes through a planted link, and leaves a FIFO at the published path as it is (exit 5, one line)', async () => {
    const { config } = await duckdbTestDestination.fresh();
    const file = emulatorJobs({ url: emulator.url, timezone: TZ, firstDay: '2024-03-02', destination: config });
    expect((await runCli(['run', '--config', file, '--until', '2024-03-03'])).code).toBe(0);
    const published = publishPathOf(config)!;
    const victim = join(testTempDir('victim-'), 'victim.txt');
    writeFileSync(victim, 'not yours');
    // the names a publish of this process would have written its copy to
    for (const name of [`${published}.tmp-${process.pid}`, `${published}.tmp`]) symlinkSync(victim, name);
    const destination = await openDestination(config);
    try {
      await destination.publishCopy!(published, { personalData: 'keep' });
    } finally {
      await destination.close();
    }
    expect(readFileSync(victim, 'utf8')).toBe('not yours');
    expect(lstatSync(published).isFile()).toBe(true);

    const fifoConfig = { ...config, publish_path: join(dirname(published), 'readers.fifo') };
    mkfifo(fifoConfig.publish_path);
    const fifoFile = emulatorJobs({ url: emulator.url, timezone: TZ, firstDay: '2024-03-02', destination: config });
    writeFileSync(
      fifoFile,
      readFileSync(fifoFile, 'utf8').replace(
        /( {2}path: .*\n)/,
        `$1  publish_path: ${JSON.stringify(fifoConfig.publish_path)}\n`,
      ),
    );
    const publish = await runCli(['publish', '--config', fifoFile]);
    expect(publish.code).toBe(5);
    expect(publish.stdout).toContain(
      `readers' copy NOT published (they keep the previous one): could not publish ${fifoConfig.publish_path}: `,
    );
    expect(publish.stdout).toContain('is a FIFO, not a regular file: it is left as it is');
    expect(lstatSync(fifoConfig.publish_path).isFIFO()).toBe(true);
  });
});
