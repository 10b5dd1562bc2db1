import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { DestinationSettings } from '../../src/plan/job-plan.js';
import { emulatorJobs, runCli } from '../helpers/cli.js';
import { asAnalyst } from '../helpers/analyst-reader.js';
import { testDestinations } from '../helpers/destinations.js';
import { rawSql } from '../helpers/raw-warehouse.js';
import { testTempDir } from '../helpers/temp-dir.js';
import { useEmulator } from '../helpers/suite-emulator.js';

const TZ = 'Europe/Athens';
const FROM = '2024-05-01';
const TO = '2024-05-03';
const NO_SALT = { LOYALTY_PII_SALT: undefined };

/** Rows of `sql` on what analysts read: the published DuckDB copy, or PostgreSQL's analysts' schema. */
function analystRows(config: DestinationSettings, sql: string): Promise<Array<Record<string, unknown>>> {
  return asAnalyst(config, (conn) => conn.all(sql));
}

/** The pipeline's own row of `_etl_pii_key`, read past the pipeline. */
async function keptKey(config: DestinationSettings): Promise<{ key: string; origin: string }> {
  const [row] = await rawSql(config, ['SELECT key, origin FROM _etl_pii_key'], { readOnly: true });
  return row as { key: string; origin: string };
}

/** Every file under `dir`, as bytes (for searching them for a secret). */
function filesUnder(dir: string): Buffer[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .map((f) => join(dir, f))
    .filter((f) => statSync(f).isFile())
    .map((f) => readFileSync(f));
}

describe.each(testDestinations)('the key of personal data, with no setting, on $name', (target) => {
  const emulator = useEmulator({ seed: 8, accounts: 25, startDate: FROM, endDate: TO, timezone: TZ, port: 0 });

  it('is made at first use, kept, never shown to analysts or exported; a later LOYALTY_PII_SALT that differs is said', async () => {
    const { config } = await target.empty();
    const jobs = emulatorJobs({
      url: emulator.url,
      timezone: TZ,
      firstDay: FROM,
      destination: config,
      streams: ['accounts'],
    });
    const first = await runCli(['run', '--config', jobs, '--until', TO], NO_SALT);
    expect(first.stderr).not.toMatch(/loyalty-etl:/);
    expect(first.code).toBe(0);
    const kept = await keptKey(config);
    expect(kept).toEqual({ key: expect.stringMatching(/^[0-9a-f]{64}$/), origin: 'generated' });

    const phones = async () =>
      (await analystRows(config, 'SELECT customer_id, phone FROM accounts ORDER BY customer_id')).map(
        (r) => `${String(r.customer_id)} ${String(r.phone)}`,
      );
    const hashed = await phones();
    expect(hashed.length).toBeGreaterThan(0);
    expect(hashed.every((p) => /^\S+ ([0-9a-f]{64}|null)$/.test(p))).toBe(true);
    const tables = await analystRows(
      config,
      config.type === 'duckdb'
        ? `SELECT table_name FROM duckdb_tables() WHERE table_name = '_etl_pii_key'`
        : `SELECT table_name FROM information_schema.tables WHERE table_schema = 'public_analysts' AND table_name = '_etl_pii_key'`,
    );
    expect(tables).toEqual([]);

    // a second night hashes alike, and the key reaches no output, copy, catalog or export
    const second = await runCli(['run', '--config', jobs, '--until', TO], NO_SALT);
    expect(second.code).toBe(0);
    expect(await phones()).toEqual(hashed);
    const catalog = await runCli(['catalog', '--config', jobs, '--format', 'json'], NO_SALT);
    expect(catalog.code).toBe(0);
    expect(catalog.stdout).not.toContain('_etl_pii_key');
    const exportDir = testTempDir('export-');
    const exported = await runCli(['export', '--config', jobs, '--format', 'parquet', '--output', exportDir], NO_SALT);
    expect(exported.code).toBe(0);
    const outputs = [first, second, catalog, exported].map((r) => r.stdout + r.stderr).join('\n');
    expect(outputs).not.toContain(kept.key);
    for (const bytes of filesUnder(exportDir)) expect(bytes.includes(kept.key)).toBe(false);
    if (config.type === 'duckdb')
      expect(readFileSync(join(dirname(config.path), 'warehouse.published.duckdb')).includes(kept.key)).toBe(false);

    // the operator sets a salt now: hashes change, and the run says so
    const salted = await runCli(['run', '--config', jobs, '--until', TO], { LOYALTY_PII_SALT: 'a new pepper' });
    expect(salted.code).toBe(0);
    expect(salted.stderr).toMatch(
      /LOYALTY_PII_SALT is not the salt this warehouse hashed personal data with until now \(generated, since /,
    );
    expect(await phones()).not.toEqual(hashed);
    expect((await keptKey(config)).origin).toBe('LOYALTY_PII_SALT');
    const again = await runCli(['run', '--config', jobs, '--until', TO], { LOYALTY_PII_SALT: 'a new pepper' });
    expect(again.stderr).not.toMatch(/is not the salt/);
  });
});
