import { createHash } from 'node:crypto';
import { readdirSync } from 'node:fs';
import { basename, dirname } from 'node:path';
import pg from 'pg';
import { beforeAll, describe, expect, it } from 'vitest';
import type { DestinationSettings } from '../../src/plan/job-plan.js';
import { emulatorJobs, runCli } from '../helpers/cli.js';
import { testDestinations } from '../helpers/destinations.js';
import { withWarehouse } from '../helpers/warehouse-reader.js';
import { asAnalyst } from '../helpers/analyst-reader.js';
import { useEmulator } from '../helpers/suite-emulator.js';

const TZ = 'Europe/Athens';
const START = '2024-03-01';
const END = '2024-03-07';
const SALT = 'a salt for this suite';

/** The hash an analyst sees, computed the documented way: SHA-256 of the key, ':' and the value; the key is SHA-256 of the salt. */
function hashOf(value: string): string {
  const key = createHash('sha256').update(`loyalty-etl personal data\n${SALT}`).digest('hex');
  return createHash('sha256').update(`${key}:${value}`).digest('hex');
}

const PERSONAL = ['phone', 'email', 'first_name', 'last_name', 'birthdate'] as const;

describe.each(testDestinations)('what analysts read of personal data on $name', (target) => {
  const truthPhones = new Set<string>();
  // records carry members the spec does not list, which may be personal data as well,
  const emulator = useEmulator({
    seed: 7,
    accounts: 40,
    startDate: START,
    endDate: END,
    timezone: TZ,
    port: 0,
    readings: { unlistedFields: true },
    // and malformed records, some of whose fields load as NULL with their raw values in _etl_field_rejects
    badRecordRate: 0.1,
  });
  beforeAll(async () => {
    for (const a of emulator.truth.accounts(START, END)) if (a.phone) truthPhones.add(a.phone);
  });

  async function loaded(
    personalData: 'keep' | 'hash' | 'drop',
    env: Record<string, string | undefined> = { LOYALTY_PII_SALT: SALT },
    warehouse: 'fresh' | 'empty' = 'fresh',
    pipelineTables?: boolean,
  ) {
    const { config } = await target[warehouse]();
    const destination = {
      ...config,
      analysts: {
        personal_data: personalData,
        ...(pipelineTables === undefined ? {} : { pipeline_tables: pipelineTables }),
      },
    } as DestinationSettings;
    const file = emulatorJobs({
      url: emulator.url,
      timezone: TZ,
      firstDay: START,
      destination,
      streams: ['accounts', 'surveys'],
      pageSize: 50,
    });
    const result = await runCli(['backfill', '--config', file, '--from', START, '--to', END], env);
    return { config: destination, file, result };
  }

  it('hash (the default): every personal column is the salted SHA-256 of its value, the same in every table, so joins still work', async () => {
    // the pipeline's own tables asked for too: they are hashed as well
    const { config, result } = await loaded('hash', undefined, 'fresh', true);
    expect(result.code, result.stderr).toBe(0);
    const clear = await withWarehouse(config, (conn) =>
      conn.all<Record<string, string | null>>(
        `SELECT customer_id, phone, email, first_name, last_name, CAST(birthdate AS VARCHAR) AS birthdate FROM accounts`,
      ),
    );
    const [unlistedLoaded] = await withWarehouse(config, (conn) =>
      conn.all<{ n: number }>(`SELECT COUNT(_unlisted) AS n FROM accounts`),
    );
    expect(Number(unlistedLoaded!.n), 'the warehouse keeps the unlisted members').toBeGreaterThan(0);
    const [rawLoaded] = await withWarehouse(config, (conn) =>
      conn.all<{ n: number }>(`SELECT COUNT(raw_value) AS n FROM _etl_field_rejects`),
    );
    const fieldRejects = Number(rawLoaded!.n);
    expect(fieldRejects, 'the warehouse keeps the raw values of fields it could not read').toBeGreaterThan(0);
    expect(clear.some((r) => r.phone !== null && truthPhones.has(r.phone!))).toBe(true);
    await asAnalyst(config, async (conn) => {
      const seen = await conn.all<Record<string, string | null>>(
        `SELECT customer_id, phone, email, first_name, last_name, CAST(birthdate AS VARCHAR) AS birthdate FROM accounts`,
      );
      expect(seen.length).toBe(clear.length);
      const byId = new Map(clear.map((r) => [r.customer_id, r]));
      for (const row of seen)
        for (const c of PERSONAL)
          expect(row[c], `${row.customer_id} ${c}`).toBe(
            byId.get(row.customer_id)![c] === null ? null : hashOf(byId.get(row.customer_id)![c]!),
          );
      // no clear phone number anywhere analysts read it
      for (const table of ['accounts', 'accounts_history', 'survey_responses', '_etl_accounts_observations']) {
        const phones = await conn.all<{ phone: string | null }>(`SELECT phone FROM ${table}`);
        expect(
          phones.filter((p) => p.phone !== null && truthPhones.has(p.phone)),
          table,
        ).toEqual([]);
        expect(
          phones.every((p) => p.phone === null || /^[0-9a-f]{64}$/.test(p.phone)),
          table,
        ).toBe(true);
      }
      const payloads = await conn.all<{ n: number }>(`SELECT COUNT(payload) AS n FROM _etl_rejects`);
      expect(Number(payloads[0]!.n)).toBe(0);
      // members the spec does not list are withheld whole: no one has said they hold no personal data
      for (const table of ['accounts', 'survey_responses']) {
        const [unlisted] = await conn.all<{ n: number }>(`SELECT COUNT(_unlisted) AS n FROM ${table}`);
        expect(Number(unlisted!.n), table).toBe(0);
      }
      // nor the raw values of fields that could not be read (a birthdate, say), the rows all there
      const [fields] = await conn.all<{ n: number; raw: number }>(
        `SELECT COUNT(*) AS n, COUNT(raw_value) AS raw FROM _etl_field_rejects`,
      );
      expect([Number(fields!.n), Number(fields!.raw)]).toEqual([fieldRejects, 0]);
      // a survey answer joins its customer on the hashed phone as it did on the clear one
      const joined = await conn.all<{ n: number }>(
        `SELECT COUNT(*) AS n FROM survey_responses r JOIN accounts a ON a.phone = r.phone AND a.customer_id = r.customer_id`,
      );
      expect(Number(joined[0]!.n)).toBeGreaterThan(0);
      // the survey views read the same hashed rows
      const [view] = await conn.all<{ view_name: string }>(
        'SELECT view_name FROM surveys ORDER BY responses DESC LIMIT 1',
      );
      const viewPhones = await conn.all<{ phone: string | null }>(`SELECT phone FROM "${view!.view_name}"`);
      expect(viewPhones.every((p) => p.phone === null || /^[0-9a-f]{64}$/.test(p.phone))).toBe(true);
    });
    if (target.name === 'duckdb') {
      const published = config.type === 'duckdb' ? config.path.replace(/\.duckdb$/, '.published.duckdb') : '';
      expect(readdirSync(dirname(published)).filter((n) => n.startsWith(`${basename(published)}.`))).toEqual([]);
    }
  }, 180_000);

  it('drop: personal columns are NULL where analysts read, the rows all there; keep: as loaded', async () => {
    const dropped = await loaded('drop');
    expect(dropped.result.code, dropped.result.stderr).toBe(0);
    const total = await withWarehouse(dropped.config, async (conn) =>
      Number((await conn.all<{ n: number }>('SELECT COUNT(*) AS n FROM accounts'))[0]!.n),
    );
    await asAnalyst(dropped.config, async (conn) => {
      const [row] = await conn.all<Record<string, number>>(
        `SELECT COUNT(*) AS n, ${PERSONAL.map((c) => `COUNT(${c}) AS ${c}`).join(', ')} FROM accounts`,
      );
      expect(Number(row!.n)).toBe(total);
      for (const c of PERSONAL) expect(Number(row![c]), c).toBe(0);
      const [s] = await conn.all<{ n: number }>('SELECT COUNT(phone) AS n FROM survey_responses');
      expect(Number(s!.n)).toBe(0);
      const [unlisted] = await conn.all<{ n: number }>('SELECT COUNT(_unlisted) AS n FROM accounts');
      expect(Number(unlisted!.n)).toBe(0);
    });
    const kept = await loaded('keep', {});
    expect(kept.result.code, kept.result.stderr).toBe(0);
    await asAnalyst(kept.config, async (conn) => {
      const phones = await conn.all<{ phone: string | null }>('SELECT phone FROM accounts');
      expect(phones.some((p) => p.phone !== null && truthPhones.has(p.phone!))).toBe(true);
      const [unlisted] = await conn.all<{ n: number }>('SELECT COUNT(_unlisted) AS n FROM accounts');
      expect(Number(unlisted!.n), 'keep: the unlisted members as loaded').toBeGreaterThan(0);
    });
  }, 180_000);

  it('hash without LOYALTY_PII_SALT: the warehouse makes a key and keeps it, and analysts read hashes', async () => {
    const { config, result } = await loaded('hash', { LOYALTY_PII_SALT: '' });
    expect(result.code, result.stderr).toBe(0);
    const [kept] = await withWarehouse(config, (conn) =>
      conn.all<{ origin: string }>(`SELECT origin FROM _etl_pii_key`),
    );
    expect(kept?.origin).toBe('generated');
    await asAnalyst(config, async (conn) => {
      const phones = await conn.all<{ phone: string | null }>('SELECT phone FROM accounts WHERE phone IS NOT NULL');
      expect(phones.length).toBeGreaterThan(0);
      expect(phones.every((p) => /^[0-9a-f]{64}$/.test(p.phone!))).toBe(true);
    });
  });

  if (target.name === 'postgres')
    it('a role granted the analysts schema as documented reads the hashed views and cannot read the tables', async () => {
      const { config, result } = await loaded('hash');
      expect(result.code, result.stderr).toBe(0);
      if (config.type !== 'postgres') return;
      const role = `analyst_${Math.random().toString(36).slice(2, 8)}`;
      const analysts = `${config.schema}_analysts`;
      await withWarehouse(config, async (conn) => {
        await conn.run(`CREATE ROLE ${role} LOGIN PASSWORD 'x'`);
        await conn.run(`GRANT USAGE ON SCHEMA "${analysts}" TO ${role}`);
        await conn.run(`GRANT SELECT ON ALL TABLES IN SCHEMA "${analysts}" TO ${role}`);
      });
      const url = new URL(config.url);
      url.username = role;
      url.password = 'x';
      const client = new pg.Client({ connectionString: url.toString() });
      await client.connect();
      try {
        const { rows: phones } = await client.query<{ phone: string | null }>(
          `SELECT phone FROM "${analysts}".accounts`,
        );
        expect(phones.length).toBeGreaterThan(0);
        expect(phones.every((p) => p.phone === null || /^[0-9a-f]{64}$/.test(p.phone))).toBe(true);
        await expect(client.query(`SELECT phone FROM "${config.schema}".accounts`)).rejects.toThrow(
          /permission denied/,
        );
        await expect(client.query(`SELECT key FROM "${config.schema}"._etl_analysts`)).rejects.toThrow(
          /permission denied/,
        );
      } finally {
        await client.end();
      }
    }, 180_000);
});
