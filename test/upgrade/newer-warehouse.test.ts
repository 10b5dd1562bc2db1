import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ExitCode } from '../../src/commands/exit-codes.js';
import { RELEASE } from '../../src/load/warehouse/package-root.js';
import type { DestinationSettings } from '../../src/plan/job-plan.js';
import { emulatorJobs, runCli } from '../helpers/cli.js';
import { testDestinations } from '../helpers/destinations.js';
import { rawSql } from '../helpers/raw-warehouse.js';
import { testTempDir } from '../helpers/temp-dir.js';
import { useEmulator } from '../helpers/suite-emulator.js';

const TZ = 'Europe/Athens';
const FROM = '2024-05-01';
const TO = '2024-05-04';

/** What the warehouse holds, whole: the DuckDB file's bytes, or every row of every table of the schema. */
async function fingerprint(config: DestinationSettings): Promise<string> {
  const hash = createHash('sha256');
  if (config.type === 'duckdb') {
    hash.update(readFileSync(config.path));
    hash.update(existsSync(`${config.path}.wal`) ? readFileSync(`${config.path}.wal`) : 'no wal');
    return hash.digest('hex');
  }
  const tables = await rawSql(config, [
    `SELECT table_name FROM information_schema.tables WHERE table_schema = '${config.schema}' ORDER BY table_name`,
  ]);
  for (const { table_name } of tables) {
    const rows = await rawSql(config, [`SELECT * FROM "${String(table_name)}"`]);
    hash.update(
      `${String(table_name)}\n${rows
        .map((r) => JSON.stringify(r))
        .sort()
        .join('\n')}\n`,
    );
  }
  return hash.digest('hex');
}

describe.each(testDestinations)('a warehouse of a newer release, on $name', (target) => {
  const emulator = useEmulator({ seed: 5, accounts: 30, startDate: FROM, endDate: TO, timezone: TZ, port: 0 });

  async function loadedWarehouse() {
    const made = await target.fresh();
    const jobs = emulatorJobs({
      url: emulator.url,
      timezone: TZ,
      firstDay: FROM,
      destination: made.config,
      streams: ['accounts', 'surveys'],
    });
    const first = await runCli(['run', '--config', jobs, '--until', TO]);
    expect(first.stderr).not.toMatch(/loyalty-etl:/);
    expect(first.code).toBe(0);
    return { ...made, jobs };
  }

  it('records the release that migrated and opened it, and status shows it', async () => {
    const { jobs } = await loadedWarehouse();
    const status = await runCli(['status', '--config', jobs, '--json']);
    expect(status.code).toBe(0);
    const shown = JSON.parse(status.stdout) as { warehouseRelease: Record<string, unknown> };
    expect(shown.warehouseRelease).toMatchObject({
      release: RELEASE,
      openedBy: RELEASE,
      migration: { version: expect.stringMatching(/^\d{3}_/), release: RELEASE },
    });
    const text = await runCli(['status', '--config', jobs]);
    expect(text.stdout).toContain(`warehouse: opened by loyalty-etl ${RELEASE} since `);
  });

  const commands: Array<[string, (jobs: string) => string[]]> = [
    ['run', (jobs) => ['run', '--config', jobs, '--until', TO]],
    ['backfill', (jobs) => ['backfill', '--config', jobs, '--from', FROM, '--to', TO]],
    ['replay', (jobs) => ['replay', '--config', jobs, '--from', FROM, '--to', TO]],
    ['status', (jobs) => ['status', '--config', jobs]],
    ['verify', (jobs) => ['verify', '--config', jobs, '--from', FROM, '--to', TO]],
    ['check', (jobs) => ['check', '--config', jobs]],
    ['report', (jobs) => ['report', '--config', jobs, '--output', join(testTempDir('page-'), 'report.html')]],
    ['catalog', (jobs) => ['catalog', '--config', jobs, '--format', 'json']],
    ['export', (jobs) => ['export', '--config', jobs, '--format', 'parquet', '--output', testTempDir('export-')]],
    ['publish', (jobs) => ['publish', '--config', jobs]],
  ];

  it.each([
    {
      why: 'a migration this release does not know',
      plant: [`INSERT INTO _etl_migrations (version, applied_at) VALUES ('999_from_a_later_release', now())`],
      says: /was migrated by a newer release of loyalty-etl \(999_from_a_later_release unknown to /,
    },
    {
      why: 'a newer release that opened it',
      plant: [`INSERT INTO _etl_releases VALUES ('99.1.0', now())`],
      says: /was last written by loyalty-etl 99\.1\.0; .*run 99\.1\.0 or later on it/,
    },
  ])('refuses $why in every command, in one line, leaving it untouched', async ({ plant, says }) => {
    const { config, jobs } = await loadedWarehouse();
    await rawSql(config, plant);
    const before = await fingerprint(config);
    for (const [name, args] of commands) {
      if (name === 'publish' && config.type !== 'duckdb') continue;
      const result = await runCli(args(jobs));
      expect({ name, code: result.code }).toEqual({ name, code: ExitCode.newerWarehouse });
      const lines = result.stderr.split('\n').filter((l) => l.startsWith('loyalty-etl: '));
      expect(lines, `${name}: ${result.stderr}`).toHaveLength(1);
      expect(lines[0]).toMatch(says);
      expect(lines[0]).toContain(`this is loyalty-etl ${RELEASE}`);
      expect(result.stderr).not.toMatch(/\n\s+at /); // no stack trace
      expect(await fingerprint(config), `${name} changed the warehouse`).toBe(before);
    }
  });
});
